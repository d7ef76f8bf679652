import { expect, test } from "vitest";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { b64, png } from "../support/helpers/test-images.js";

const f = useLoopd();

/** Counts the attachment rows whose bytes the database hands back, by wrapping the real client's `query` (results pass through untouched). */
async function attachmentRowsRead(work: () => Promise<unknown>): Promise<number> {
  const client = (f.database.db as any).session.client;
  const query = client.query;
  let rows = 0;
  client.query = async function (this: unknown, ...args: any[]) {
    const result = await query.apply(this, args);
    const text = typeof args[0] === "string" ? args[0] : args[0]?.text;
    if (typeof text === "string" && /from "attachments"/.test(text ?? "") && /encode\(/.test(text))
      rows += result.rows.length;
    return result;
  };
  try {
    await work();
  } finally {
    client.query = query;
  }
  return rows;
}

test("the bytes of a conversation's image are read once per call, however often the conversation was forked (each fork keeps a copy under the same id)", async () => {
  const inject = (method: "GET" | "POST", url: string, payload?: unknown) =>
    f.loopd.app.inject({ method, url, ...(payload !== undefined && { payload: payload as object }) });
  const conv = (await inject("POST", "/conversations", { provider: "anthropic", tools: [] })).json();
  f.llm.script({ text: "A picture." });
  await inject("POST", `/conversations/${conv.id}/messages`, {
    content: [
      { type: "text", text: "What is this?" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: b64(png(64, 64, 1)) } },
    ],
  });
  for (let i = 0; i < 8; i++)
    expect((await inject("POST", `/conversations/${conv.id}/fork`, { at_seq: 2 })).statusCode).toBe(201);
  const history = await f.loopd.services.store.messages.history(conv.id);
  const rows = await attachmentRowsRead(() => f.loopd.services.store.attachments.dataOf("default", history));
  // One image: one row. Reading every fork's copy makes each call's read grow with the forks (5 MB × 10 images × forks).
  expect(rows).toBe(1);
});
