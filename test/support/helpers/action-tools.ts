import { z } from "zod";
import { defineTool } from "../../../src/tools/define-tool.js";

/** What the tools below did, so a test can tell a call that ran from one that did not. */
export const effects: string[] = [];

/** A server tool with an effect: the tests list it in `approval_required`. */
export const deleteNoteTool = () =>
  defineTool({
    name: "delete_note",
    description: "Deletes a note.",
    input: z.object({ title: z.string() }),
    execute: ({ title }) => {
      effects.push(`deleted ${title}`);
      return `note ${title} deleted`;
    },
  });

/** A client tool, as a conversation declares it. */
export const INVOICE_TOOL = {
  name: "create_invoice",
  description: "Creates an invoice in the client's accounting system.",
  input_schema: { type: "object", properties: { customer: { type: "string" } }, required: ["customer"] },
};
