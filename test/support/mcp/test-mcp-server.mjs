/**
 * An MCP server for tests, written with the official SDK's low-level
 * `Server`: the same tools over stdio (`stdio-server.mjs`) and Streamable
 * HTTP (`http-mcp-server.ts`). Its tools list comes in pages of three
 * (`nextCursor`); `add_tool` adds one and says `notifications/tools/list_changed`.
 * What it saw (calls, cancellations, intervals) goes to `record`.
 */
import { Buffer } from "node:buffer";
import process from "node:process";
import { clearTimeout, setTimeout } from "node:timers";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const PAGE = 3;
const object = (properties = {}, required = []) => ({ type: "object", properties, required });
const text = (t) => ({ content: [{ type: "text", text: t }] });

/** @param {{ record: (entry: object) => void, crash?: () => void }} options */
export function createTestMcpServer({ record, crash = () => process.exit(1) }) {
  const tools = [
    {
      name: "echo",
      description: "Says the text back.",
      inputSchema: object({ text: { type: "string" } }, ["text"]),
      annotations: { readOnlyHint: true },
    },
    {
      name: "slow_read",
      description: "Waits, then says when it started.",
      inputSchema: object({ ms: { type: "number" } }),
      annotations: { readOnlyHint: true },
    },
    {
      name: "gather",
      description: "Waits until `of` calls are in flight together (or 5 s pass).",
      inputSchema: object({ of: { type: "number" } }, ["of"]),
      annotations: { readOnlyHint: true },
    },
    { name: "fail", description: "Always fails.", inputSchema: object(), annotations: { readOnlyHint: true } },
    {
      name: "write_note",
      description: "Saves a note.",
      inputSchema: object({ note: { type: "string" } }, ["note"]),
      annotations: { destructiveHint: true },
    },
    {
      name: "safe_write",
      description: "Appends, never destroys; waits ms first.",
      inputSchema: object({ note: { type: "string" }, ms: { type: "number" } }),
      annotations: { destructiveHint: false },
    },
    {
      name: "hang",
      description: "Never answers (until cancelled).",
      inputSchema: object(),
      annotations: { readOnlyHint: true },
    },
    { name: "crash", description: "Exits mid-call.", inputSchema: object(), annotations: { readOnlyHint: true } },
    { name: "huge", description: "Answers 50 MB.", inputSchema: object(), annotations: { readOnlyHint: true } },
    {
      name: "media",
      description: "Answers an image, audio and resources.",
      inputSchema: object(),
      annotations: { readOnlyHint: true },
    },
    {
      name: "picture",
      description: "Answers its text and the images it is given, as image content.",
      inputSchema: object({
        text: { type: "string" },
        images: { type: "array", items: object({ data: { type: "string" }, mimeType: { type: "string" } }) },
      }),
      annotations: { readOnlyHint: true },
    },
    {
      name: "structured",
      description: "Answers structured content only.",
      inputSchema: object(),
      annotations: { readOnlyHint: true },
    },
    {
      name: "garbage",
      description: "Answers something that is not a tool result.",
      inputSchema: object(),
      annotations: { readOnlyHint: true },
    },
    {
      name: "env",
      description: "Lists its environment's names.",
      inputSchema: object(),
      annotations: { readOnlyHint: true },
    },
    {
      name: "add_tool",
      description: "Adds a tool.",
      inputSchema: object({ name: { type: "string" } }, ["name"]),
      annotations: { readOnlyHint: true },
    },
    {
      name: "a.tool with spaces/and a name far too long for the providers to take as it stands",
      description: "Has a name to cut.",
      inputSchema: object(),
      annotations: { readOnlyHint: true },
    },
  ];
  /** The gather calls in flight, each with the way to end it. */
  const gathering = [];
  const server = new Server(
    { name: "loopd-test", version: "1.0.0" },
    { capabilities: { tools: { listChanged: true } } },
  );

  server.setRequestHandler(ListToolsRequestSchema, (request) => {
    const at = Number(request.params?.cursor ?? 0);
    const page = tools.slice(at, at + PAGE);
    return at + PAGE < tools.length ? { tools: page, nextCursor: String(at + PAGE) } : { tools: page };
  });

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, arguments: args = {} } = request.params;
    record({ type: "call", name, args });
    switch (name) {
      case "echo":
        return text(`echo: ${args.text}`);
      case "slow_read": {
        const started = Date.now();
        await new Promise((resolve) => setTimeout(resolve, args.ms ?? 200));
        record({ type: "interval", started, ended: Date.now() });
        return text(`started at ${started}`);
      }
      case "gather":
        return new Promise((resolve) => {
          const timer = setTimeout(() => resolve(text("alone")), 5_000);
          gathering.push(() => {
            clearTimeout(timer);
            resolve(text("together"));
          });
          if (gathering.length >= args.of) for (const end of gathering.splice(0)) end();
        });
      case "fail":
        return { content: [{ type: "text", text: "the disk is full" }], isError: true };
      case "safe_write":
        if (args.ms) await new Promise((resolve) => setTimeout(resolve, args.ms));
        return text(`saved: ${args.note}`);
      case "write_note":
        return text(`saved: ${args.note}`);
      case "hang":
        return new Promise((resolve) => {
          extra.signal.addEventListener("abort", () => {
            record({ type: "cancelled", name, reason: String(extra.signal.reason ?? "") });
            resolve(text("never seen"));
          });
        });
      case "crash":
        setTimeout(crash, 20);
        return new Promise(() => {});
      case "huge":
        return text("x".repeat(50 * 1024 * 1024));
      case "media":
        return {
          content: [
            { type: "text", text: "Here is what I found." },
            { type: "image", data: Buffer.alloc(1234).toString("base64"), mimeType: "image/png" },
            { type: "audio", data: Buffer.alloc(10).toString("base64"), mimeType: "audio/wav" },
            { type: "resource", resource: { uri: "file:///notes.txt", text: "the embedded notes" } },
            {
              type: "resource",
              resource: { uri: "file:///photo.jpg", blob: Buffer.alloc(30).toString("base64"), mimeType: "image/jpeg" },
            },
            { type: "resource_link", uri: "file:///elsewhere.md", name: "elsewhere" },
          ],
        };
      case "picture":
        return {
          content: [
            ...(args.text ? [{ type: "text", text: args.text }] : []),
            ...(args.images ?? []).map(({ data, mimeType }) => ({ type: "image", data, mimeType })),
          ],
        };
      case "structured":
        return { content: [], structuredContent: { temperature: 21.5, unit: "C" } };
      case "garbage":
        return { content: "not a list" };
      case "env":
        return text(Object.keys(process.env).sort().join(","));
      case "add_tool":
        tools.push({
          name: args.name,
          description: "Added later.",
          inputSchema: object(),
          annotations: { readOnlyHint: true },
        });
        await server.sendToolListChanged();
        return text(`added ${args.name}`);
      default:
        return { content: [{ type: "text", text: `no tool ${name}` }], isError: true };
    }
  });
  return server;
}
