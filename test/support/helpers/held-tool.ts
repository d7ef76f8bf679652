import { z } from "zod";
import { defineTool } from "../../../src/tools/define-tool.js";

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * A tool (`hold` by default) that runs until the test lets it go: the run
 * calling it stays running exactly as long as a test needs.
 */
export function heldTool(name = "hold") {
  let gate = deferred();
  let entered = deferred();
  return {
    tool: defineTool({
      name,
      description: "Waits for the test.",
      input: z.object({}),
      execute: async () => {
        entered.resolve();
        await gate.promise;
        return "held";
      },
    }),
    /** Holds the next call again. */
    reset() {
      gate = deferred();
      entered = deferred();
    },
    /** Resolves once a call is inside the tool. */
    entered: () => entered.promise,
    /** Lets the call inside (and any later one, until `reset`) return. */
    release: () => gate.resolve(),
  };
}
