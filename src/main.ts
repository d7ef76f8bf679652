import { loadDotEnv } from "./dot-env.js";
import { serve } from "./serve.js";

try {
  loadDotEnv();
  await serve();
} catch (err) {
  // One prefix for every way a start can fail; what the operator must fix is the message, never a stack trace.
  const message = err instanceof Error ? err.message : String(err);
  console.error(`loopd cannot start: ${message}`);
  process.exit(1);
}
