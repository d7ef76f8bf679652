import type { NewMessage } from "../../src/core/messages.js";
import { openDatabase } from "../../src/store/db.js";
import { createStore } from "../../src/store/store.js";
import { summarize, timeMany, type Stats } from "../lib/measure.js";

export interface AppendRow {
  /** Messages in the conversation before the timed appends. */
  messages: number;
  append: Stats;
  /** Reading the whole history back, as every run does. */
  read: Stats;
}

/**
 * (b, persistence alone) Appends one message per transaction — what loopd
 * does after every step — to one conversation, and times the appends and a
 * full history read at each checkpoint. Rows with a sequence number, so an
 * append should cost the same at 10 messages as at 10,000.
 */
export async function measureAppendCost({
  open,
  checkpoints,
  samples,
}: {
  open: { databaseUrl?: string; dataDir?: string };
  checkpoints: number[];
  samples: number;
}): Promise<AppendRow[]> {
  const database = await openDatabase(open);
  try {
    await database.migrate();
    const store = createStore(database);
    const newConversation = () =>
      store.conversations.create({
        title: "bench",
        system: null,
        provider: "mock",
        model: "loopd-mock",
        tools: [],
        metadata: {},
      });
    const appendTo = (conversationId: string, items: NewMessage[]) =>
      store.transaction((tx) => tx.messages.append({ conversationId, runId: null, items }));

    // Warm the database and the JIT on a conversation of its own first, or the first window measures start-up.
    const warmup = await newConversation();
    for (let i = 0; i < 100; i++) await appendTo(warmup.id, [message(i)]);
    for (let i = 0; i < 5; i++) await store.messages.history(warmup.id);

    const conversation = await newConversation();
    let count = 0;
    const append = (items: NewMessage[]) => appendTo(conversation.id, items);

    const rows: AppendRow[] = [];
    for (const checkpoint of checkpoints) {
      while (count < checkpoint) {
        const batch = Math.min(500, checkpoint - count);
        await append(Array.from({ length: batch }, (_, i) => message(count + i)));
        count += batch;
      }
      const durations: number[] = [];
      const started = performance.now();
      for (let i = 0; i < samples; i++) {
        const t0 = performance.now();
        await append([message(count++)]);
        durations.push(performance.now() - t0);
      }
      const read = await timeMany(5, 1, async () => {
        await store.messages.history(conversation.id);
      });
      rows.push({ messages: checkpoint, append: summarize(durations, performance.now() - started), read });
    }
    return rows;
  } finally {
    await database.close();
  }
}

function message(i: number): NewMessage {
  const text = `Message ${i}: a sentence or two of ordinary length, about as long as a short chat turn is, give or take.`;
  return i % 2 === 0
    ? { role: "user", content: [{ type: "text", text }] }
    : { role: "assistant", content: [{ type: "text", text }] };
}
