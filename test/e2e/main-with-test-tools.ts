import { z } from "zod";
import { runCli } from "../../src/cli/run-cli.js";
import { serve } from "../../src/serve.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { createBuiltinTools } from "../../src/tools/builtin/index.js";

/**
 * loopd's own start (`serve`), with one tool more for the process tests: a
 * call that stays inside its tool until the run stops it (or the process
 * dies), so a test can kill the process mid-tool at a moment of its choosing.
 */
const blockUntilStopped = defineTool({
  name: "block_until_stopped",
  description: "Waits until the run is stopped. Test tool.",
  input: z.object({}),
  timeoutMs: 600_000,
  execute: (_input, { signal }) =>
    new Promise((_resolve, reject) =>
      signal.addEventListener("abort", () => reject(new Error("stopped")), { once: true }),
    ),
});

// LOOPD_TEST_THROWAWAY_KEEP_MS: a short keep of store: false conversations, for a test that kills the process holding one.
const keep = process.env.LOOPD_TEST_THROWAWAY_KEEP_MS;
await runCli(
  "loopd cannot start:",
  async () =>
    void (await serve({
      tools: [...createBuiltinTools(), blockUntilStopped],
      ...(keep && { throwawayKeepMs: Number(keep) }),
    })),
);
