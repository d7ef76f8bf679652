import { z } from "zod";
import { createBuiltinTools } from "../../../src/tools/builtin/index.js";
import { defineTool } from "../../../src/tools/define-tool.js";

export const ORDERS = [
  { id: "ord_7731", customer: "Ada Lovelace", total: 42.5 },
  { id: "ord_9904", customer: "Alan Turing", total: 17 },
];

/** What `peek_history` saw of the saved history while it ran. */
export const peeks: { roles: string[]; toolResultIds: string[] }[] = [];

/** The built-in tools plus a few whose behaviour the tests control. */
export function testTools({ readHistory }: { readHistory?: () => Promise<{ role: string; content: any[] }[]> } = {}) {
  return [
    defineTool({
      name: "peek_history",
      description: "Records which messages are saved at the moment it runs.",
      input: z.object({}),
      execute: async () => {
        const history = (await readHistory?.()) ?? [];
        peeks.push({
          roles: history.map((m) => m.role),
          toolResultIds: history.filter((m) => m.role === "tool").map((m) => m.content[0].tool_call_id),
        });
        return "peeked";
      },
    }),
    ...createBuiltinTools(),
    defineTool({
      name: "search_orders",
      description: "Find orders by customer name; returns their ids.",
      input: z.object({ customer: z.string() }),
      readOnly: true,
      execute: ({ customer }) => ({ ids: ORDERS.filter((o) => o.customer.includes(customer)).map((o) => o.id) }),
    }),
    defineTool({
      name: "get_order",
      description: "An order by id.",
      input: z.object({ id: z.string() }),
      readOnly: true,
      execute: ({ id }) => {
        const order = ORDERS.find((o) => o.id === id);
        if (!order) throw new RangeError(`no order ${id}`);
        return order;
      },
    }),
    defineTool({
      name: "explode",
      description: "Always throws.",
      input: z.object({}),
      execute: () => {
        throw new TypeError("cannot read properties of undefined (reading 'x')");
      },
    }),
    defineTool({
      name: "wait_for_abort",
      description: "Runs until the run is cancelled.",
      input: z.object({}),
      execute: (_input, { signal }) =>
        new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(new Error("aborted")))),
    }),
    defineTool({
      name: "slow",
      description: "Takes far longer than its timeout.",
      input: z.object({}),
      timeoutMs: 100,
      execute: (_input, { signal }) =>
        new Promise((resolve, reject) => {
          const t = setTimeout(() => resolve("finished"), 5_000);
          signal.addEventListener("abort", () => {
            clearTimeout(t);
            reject(new Error("aborted"));
          });
        }),
    }),
  ];
}
