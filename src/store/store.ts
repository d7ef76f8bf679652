import { createConversationRepository } from "./conversation-repository.js";
import type { Db } from "./db.js";
import { createEventRepository } from "./event-repository.js";
import { createMessageRepository } from "./message-repository.js";
import { createRunRepository } from "./run-repository.js";

/** Every repository over one database, plus its transaction. */
export function createStore({ db }: { db: Db }) {
  return {
    conversations: createConversationRepository({ db }),
    messages: createMessageRepository({ db }),
    runs: createRunRepository({ db }),
    events: createEventRepository({ db }),
    transaction: <T>(fn: (tx: Db) => Promise<T>): Promise<T> => db.transaction((tx) => fn(tx as unknown as Db)),
    db,
  };
}

export type Store = ReturnType<typeof createStore>;
