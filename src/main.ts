import { runCli } from "./cli/run-cli.js";
import { serve } from "./serve.js";

await runCli("loopd cannot start:", async () => void (await serve()));
