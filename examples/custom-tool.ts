import { z } from "zod";
import { runCli } from "../src/cli/run-cli.js";
import { serve } from "../src/serve.js";
import { createBuiltinTools, defineTool } from "../src/tools/index.js";

/*
 * loopd with tools of your own beside the built-in ones. Run it with
 * `npx tsx examples/custom-tool.ts`: conversations created without a `tools`
 * list get every tool served here, yours included.
 */

// Your own data: a database or an API in real life, a map here.
const orders = new Map([
  ["A-1001", { number: "A-1001", status: "shipped", items: ["kettle"], total_eur: 39.9 }],
  ["A-1002", { number: "A-1002", status: "processing", items: ["mug", "mug"], total_eur: 12 }],
]);

const lookupOrder = defineTool({
  name: "lookup_order",
  description: "Looks up an order by its number (such as A-1001): its status, items and total.",
  input: z.object({ number: z.string().describe("The order number, such as A-1001") }),
  readOnly: true,
  execute: ({ number }) => {
    const order = orders.get(number);
    // A throw is not a crash: the model reads the message as an error result and can act on it.
    if (!order) throw new Error(`no order ${number}; order numbers look like A-1001`);
    return order;
  },
});

const refundOrder = defineTool({
  name: "refund_order",
  description: "Refunds an amount of an order to the customer.",
  input: z.object({ number: z.string(), amount_eur: z.number().positive() }),
  // Small refunds go through; a larger one pauses the run until a person approves it.
  needsApproval: ({ amount_eur }) => amount_eur > 20,
  execute: ({ number, amount_eur }) => {
    const order = orders.get(number);
    if (!order) throw new Error(`no order ${number}`);
    if (amount_eur > order.total_eur) throw new Error(`order ${number} totals only ${order.total_eur} EUR`);
    return { number, refunded_eur: amount_eur };
  },
});

// As src/main.ts starts: .env read, and a failure one line that says what to fix.
await runCli(
  "loopd cannot start:",
  async () => void (await serve({ tools: [...createBuiltinTools(), lookupOrder, refundOrder] })),
);
