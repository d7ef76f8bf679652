/**
 * The MCP sessions' bounds, on a clock of the test's: a cap per tenant and
 * per process (a new session takes the least recently used idle one's place,
 * and is refused when every one is in use), idle expiry, and a session bound
 * to the tenant that opened it.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { afterEach, expect, test } from "vitest";
import { AppError } from "../../src/errors.js";
import { createMcpSessions, type McpSessions } from "../../src/mcp-server/mcp-sessions.js";

let clock = 0;
const opened: McpSessions[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
});
const sessionsOf = (caps: { maxSessions?: number; maxSessionsPerTenant?: number; idleMs?: number } = {}) => {
  const sessions = createMcpSessions({
    maxSessions: caps.maxSessions ?? 100,
    maxSessionsPerTenant: caps.maxSessionsPerTenant ?? 100,
    idleMs: caps.idleMs ?? 60_000,
    serverOf: () => new Server({ name: "t", version: "1" }, { capabilities: {} }),
    now: () => clock,
  });
  opened.push(sessions);
  return sessions;
};
const codeOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return err instanceof AppError ? `${err.code}` : String(err);
  }
  return "none";
};
/** A session in use: one of its requests is open. */
const busy = (session: { open: number }) => void session.open++;

test("at a tenant's cap, a new session closes its least recently used idle one; with every one in use, 429", async () => {
  const sessions = sessionsOf({ maxSessionsPerTenant: 2 });
  clock = 1;
  const a = await sessions.create("acme");
  clock = 2;
  const b = await sessions.create("acme");
  clock = 3;
  await sessions.create("beta"); // another tenant's do not count
  const c = await sessions.create("acme");
  expect(codeOf(() => sessions.find(a.id, "acme"))).toBe("not_found");
  expect(sessions.find(b.id, "acme")).toBe(b);
  busy(b);
  busy(c);
  await expect(sessions.create("acme")).rejects.toMatchObject({ code: "too_many_sessions" });
  expect(sessions.size).toBe(3);
});

test("at the process's cap, the least recently used idle session of any tenant goes; with none idle, 503", async () => {
  const sessions = sessionsOf({ maxSessions: 2 });
  clock = 1;
  const a = await sessions.create("acme");
  clock = 2;
  const b = await sessions.create("beta");
  clock = 3;
  sessions.find(a.id, "acme"); // used again: now b is the least recently used
  const c = await sessions.create("gamma");
  expect(codeOf(() => sessions.find(b.id, "beta"))).toBe("not_found");
  busy(a);
  busy(c);
  await expect(sessions.create("delta")).rejects.toMatchObject({ code: "unavailable" });
});

test("a session unused for idleMs is closed; one in use is not, however long", async () => {
  const sessions = sessionsOf({ idleMs: 1000 });
  clock = 0;
  const idle = await sessions.create("acme");
  const used = await sessions.create("acme");
  busy(used);
  clock = 999;
  sessions.closeIdle();
  expect(sessions.find(idle.id, "acme")).toBe(idle);
  clock = 999 + 1000;
  sessions.closeIdle();
  expect(codeOf(() => sessions.find(idle.id, "acme"))).toBe("not_found");
  expect(sessions.find(used.id, "acme")).toBe(used);
});

test("a session is found only with the tenant that opened it", async () => {
  const sessions = sessionsOf();
  const a = await sessions.create("acme");
  expect(codeOf(() => sessions.find(a.id, "beta"))).toBe("not_found");
  expect(sessions.find(a.id, "acme")).toBe(a);
});
