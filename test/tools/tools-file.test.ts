import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.js";

const dir = mkdtempSync(path.join(tmpdir(), "loopd-tools-file-"));
let n = 0;
/** A TOOLS_FILE holding `content` (JSON, or text as it is). */
function file(content: unknown): string {
  const at = path.join(dir, `tools-${++n}.json`);
  writeFileSync(at, typeof content === "string" ? content : JSON.stringify(content));
  return at;
}
const lookup = (extra: Record<string, unknown> = {}) => ({
  name: "lookup_order",
  input_schema: { type: "object", properties: { number: { type: "string" } } },
  url: "https://orders.example.com/tools/lookup",
  ...extra,
});
/** The one line loadConfig stops with. */
function refusal(content: unknown, env: Record<string, string> = {}): string {
  const at = file(content);
  try {
    loadConfig({ TOOLS_FILE: at, ...env });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message.replace(at, "tools.json");
  }
  throw new Error("loadConfig accepted the file");
}

describe("TOOLS_FILE is checked at start: one line naming the file, the entry and the field", () => {
  test("a valid file: its HTTP tools, ${VAR} read from the environment, defaults filled, its header values kept secret", () => {
    const config = loadConfig({
      TOOLS_FILE: file({ http: [lookup({ headers: { Authorization: "Bearer ${ORDERS_TOKEN}" } })] }),
      ORDERS_TOKEN: "orders-token-1234",
    });
    expect(config.tools.file.http).toEqual([
      {
        ...lookup(),
        description: "",
        headers: { Authorization: "Bearer orders-token-1234" },
        read_only: false,
      },
    ]);
    expect(config.secrets).toContain("Bearer orders-token-1234");
  });

  test("${VAR} is the variable as written, also one loopd reads itself (PORT is a number to loopd, text to the file)", () => {
    const config = loadConfig({
      TOOLS_FILE: file({ http: [lookup({ url: "http://127.0.0.1:${PORT}/tools/lookup" })] }),
      PORT: "4100",
    });
    expect(config.tools.file.http[0]!.url).toBe("http://127.0.0.1:4100/tools/lookup");
    expect(
      loadConfig({ ENABLE_RUN_COMMAND: "true", RUN_COMMAND_ENV: "MAX_STEPS", MAX_STEPS: "7" }).tools.runCommand?.env
        .MAX_STEPS,
    ).toBe("7");
  });

  test("an unknown field, a variable that is not set, a bad URL", () => {
    expect(refusal({ http: [lookup({ timeout: 5 })] })).toBe(
      "TOOLS_FILE tools.json: http[0].timeout: is not a field loopd knows",
    );
    expect(refusal({ tools: [] })).toBe("TOOLS_FILE tools.json: tools: is not a field loopd knows");
    expect(refusal({ http: [lookup({ headers: { Authorization: "Bearer ${ORDERS_TOKEN}" } })] })).toBe(
      "TOOLS_FILE tools.json: http[0].headers.Authorization: ${ORDERS_TOKEN} is not set in the environment",
    );
    expect(refusal({ http: [lookup({ url: "ftp://orders.example.com" })] })).toBe(
      "TOOLS_FILE tools.json: http[0].url: must be an http:// or https:// URL",
    );
  });

  test("a name clash, with a built-in or another entry; a name the providers refuse; a schema that is not an object's", () => {
    expect(refusal({ http: [lookup({ name: "calculate" })] })).toBe(
      "TOOLS_FILE tools.json: http[0].name: calculate is also a built-in tool's name: tool names are unique across every source",
    );
    expect(refusal({ http: [lookup(), lookup()] })).toBe(
      "TOOLS_FILE tools.json: http[1].name: lookup_order is also http[0]'s name: tool names are unique across every source",
    );
    expect(refusal({ http: [lookup({ name: "look up" })] })).toMatch(
      /^TOOLS_FILE tools\.json: http\[0\]\.name: must match/,
    );
    expect(refusal({ http: [lookup({ input_schema: { type: "string" } })] })).toMatch(
      /^TOOLS_FILE tools\.json: http\[0\]\.input_schema: must be a JSON Schema of an object/,
    );
    expect(refusal({ http: [lookup({ secret: "not-a-secret" })] })).toMatch(
      /^TOOLS_FILE tools\.json: http\[0\]\.secret: must be a Standard Webhooks secret/,
    );
  });

  test("MCP servers: without a command or a URL, with both, a clash of names, a tool name of a server's form, an unknown approval", () => {
    const fs = { name: "fs", command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "/srv"] };
    expect(refusal({ mcp: [{ name: "fs" }] })).toBe(
      "TOOLS_FILE tools.json: mcp[0].command: needs either command (stdio) or url (Streamable HTTP), not both",
    );
    expect(refusal({ mcp: [{ ...fs, url: "http://127.0.0.1:3001/mcp" }] })).toBe(
      "TOOLS_FILE tools.json: mcp[0].command: needs either command (stdio) or url (Streamable HTTP), not both",
    );
    expect(refusal({ mcp: [fs, { name: "fs", url: "http://127.0.0.1:3001/mcp" }] })).toBe(
      "TOOLS_FILE tools.json: mcp[1].name: fs is also mcp[0]'s name",
    );
    expect(refusal({ http: [lookup({ name: "fs__read_file" })], mcp: [fs] })).toBe(
      "TOOLS_FILE tools.json: http[0].name: fs__read_file is a name of mcp[0]'s tools (fs__…): tool names are unique across every source",
    );
    // `__` ends a server's name in its tools' names: server a__b's drop would pass for server a's b__drop.
    expect(refusal({ mcp: [{ ...fs, name: "a__b" }] })).toMatch(
      /^TOOLS_FILE tools\.json: mcp\[0\]\.name: must be 1–32 of a-z, A-Z, 0-9, - and single _ between them/,
    );
    expect(refusal({ mcp: [{ ...fs, approval: "sometimes" }] })).toMatch(
      /^TOOLS_FILE tools\.json: mcp\[0\]\.approval: /,
    );
    expect(refusal({ mcp: [{ name: "everything", url: "ws://127.0.0.1:3001/mcp" }] })).toBe(
      "TOOLS_FILE tools.json: mcp[0].url: must be an http:// or https:// URL",
    );
  });

  test("a valid MCP entry: defaults filled, its header values and its environment's secrets kept secret", () => {
    const config = loadConfig({
      TOOLS_FILE: file({
        mcp: [
          { name: "gh", command: "gh-mcp", env: { GITHUB_TOKEN: "${GH_TOKEN}", LOG_LEVEL: "warn-level" } },
          { name: "everything", url: "http://127.0.0.1:3001/mcp", headers: { Authorization: "Bearer ${MCP_TOKEN}" } },
        ],
      }),
      GH_TOKEN: "ghp_secret_value_1234",
      MCP_TOKEN: "mcp-token-5678",
    });
    expect(config.tools.file.mcp[0]).toEqual({
      name: "gh",
      command: "gh-mcp",
      args: [],
      env: { GITHUB_TOKEN: "ghp_secret_value_1234", LOG_LEVEL: "warn-level" },
      headers: {},
      approval: "destructive",
    });
    expect(config.secrets).toEqual(expect.arrayContaining(["ghp_secret_value_1234", "Bearer mcp-token-5678"]));
    expect(config.secrets).not.toContain("warn-level");
  });

  test("a file that is not there, or not JSON", () => {
    expect(refusal("{ not json")).toMatch(/^TOOLS_FILE tools\.json: is not JSON: /);
    expect(() => loadConfig({ TOOLS_FILE: path.join(dir, "missing.json") })).toThrow(
      `TOOLS_FILE ${path.join(dir, "missing.json")}: cannot be read (ENOENT)`,
    );
  });
});
