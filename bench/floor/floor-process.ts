/**
 * The floor as its own process, so its CPU is measured apart from the
 * bench's (which hosts the fake LLM): started by start-floor-process.ts, it
 * runs the conversations it is sent over IPC, one after the other.
 *
 *   FLOOR_LLM_URL       the fake's OpenAI base URL
 *   FLOOR_DATABASE_URL  a Postgres database, or
 *   FLOOR_DATA_DIR      a folder for PGlite in this process
 *   FLOOR_WORKSPACE     where the tool reads its file
 */
import OpenAI from "openai";
import { runFloorConversation } from "../lib/floor-loop.js";
import { openFloorStore } from "../lib/floor-store.js";
import type { FloorCommand, FloorReply } from "./start-floor-process.js";

const env = (name: string) => process.env[name] || undefined;
const sdk = new OpenAI({ apiKey: "bench", baseURL: env("FLOOR_LLM_URL"), maxRetries: 0 });
const store = await openFloorStore({ databaseUrl: env("FLOOR_DATABASE_URL"), dataDir: env("FLOOR_DATA_DIR") });
const workspaceDir = env("FLOOR_WORKSPACE") ?? ".";

async function run({ conversationIds, prompt, request }: FloorCommand): Promise<number> {
  let calls = 0;
  for (const conversationId of conversationIds) {
    calls += await runFloorConversation({ sdk, store, request, conversationId, prompt, workspaceDir });
  }
  return calls;
}

const reply = (message: FloorReply) => process.send?.(message);

process.on("message", (command: FloorCommand) => {
  run(command).then(
    (calls) => reply({ ok: true, calls }),
    (error: unknown) => reply({ ok: false, error: String(error) }),
  );
});
process.on("disconnect", () => void store.close().then(() => process.exit(0)));
reply({ ok: true, calls: 0 });
