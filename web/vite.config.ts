import path from "node:path";
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

/** The playground: built into dist/web, which loopd serves at `/` (src/http/plugins/playground.ts). */
export default defineConfig({
  root: import.meta.dirname,
  base: "/",
  plugins: [react()],
  // No public/ folder: every file loopd serves comes out of the build, named by its hash.
  publicDir: false,
  build: {
    outDir: path.resolve(import.meta.dirname, "../dist/web"),
    emptyOutDir: true,
    // Nothing inlined as a data: URL, so the page's CSP can stay at 'self'.
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 1024,
    rollupOptions: {
      // zod (inside the ai package) has comments Rollup cannot place; they are dropped, which changes nothing.
      onwarn(warning, warn) {
        if (warning.code !== "INVALID_ANNOTATION") warn(warning);
      },
    },
  },
});
