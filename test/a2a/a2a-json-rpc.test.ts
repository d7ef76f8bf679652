/**
 * The A2A endpoint's JSON-RPC as a hostile client sends it, through raw
 * HTTP: every malformed request gets a bounded, clear error (JSON-RPC's,
 * or loopd's own shape before any JSON-RPC), never a 500.
 */
import { expect, test } from "vitest";
import { useLoopd } from "../support/helpers/use-loopd.js";

const f = useLoopd({ listen: true });

const rpc = async (body: unknown) => {
  const res = await fetch(`${f.loopd.url}/a2a/rpc-agent`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
};

test("an unknown method is -32601 method not found naming it, with params or without", async () => {
  const made = await fetch(`${f.loopd.url}/agents`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: "rpc-agent", system: "You help.", provider: "anthropic" }),
  });
  expect(made.status).toBe(201);
  for (const request of [
    { jsonrpc: "2.0", id: 1, method: "tasks/explode" },
    { jsonrpc: "2.0", id: 2, method: "Explode", params: {} },
    { jsonrpc: "2.0", id: 3, method: "" },
  ]) {
    const res = await rpc(request);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ jsonrpc: "2.0", id: request.id, error: { code: -32601 } });
    expect(res.body.error.message).toContain(JSON.stringify(request.method));
  }
});

test("a batch, an id that is an object, a body that is not JSON-RPC: 400 in loopd's shape", async () => {
  for (const body of [
    [{ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "x" } }],
    { jsonrpc: "2.0", id: { x: 1 }, method: "GetTask", params: { id: "x" } },
    { jsonrpc: "1.0", id: 1, method: "GetTask" },
  ]) {
    const res = await rpc(body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("invalid_request");
  }
});
