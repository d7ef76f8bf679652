import { ConfigError } from "./config.js";
import { serve, StartupError } from "./serve.js";

serve().catch((err: unknown) => {
  if (err instanceof ConfigError || err instanceof StartupError) {
    console.error(`loopd cannot start: ${err.message}`);
  } else {
    console.error("loopd failed to start:", err instanceof Error ? err.message : err);
  }
  process.exit(1);
});
