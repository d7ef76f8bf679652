import { PGlite } from "@electric-sql/pglite";
import pg from "pg";

/** The least a durable loop must write: each step's messages appended, one statement (one transaction) per step. */
export interface FloorStore {
  append(input: { conversationId: string; firstSeq: number; messages: readonly object[] }): Promise<void>;
  close(): Promise<void>;
}

const CREATE_TABLE = `create table if not exists floor_messages (
  conversation_id text not null,
  seq integer not null,
  role text not null,
  content jsonb not null,
  primary key (conversation_id, seq)
)`;

/** One multi-row insert: `values ($1, $2, $3, $4), ($1, $5, $6, $7), …`. */
function insertText(rows: number): string {
  const values = Array.from({ length: rows }, (_, i) => `($1, $${2 + 3 * i}, $${3 + 3 * i}, $${4 + 3 * i})`);
  return `insert into floor_messages (conversation_id, seq, role, content) values ${values.join(", ")}`;
}

function insertValues({ conversationId, firstSeq, messages }: Parameters<FloorStore["append"]>[0]): unknown[] {
  return [
    conversationId,
    ...messages.flatMap((m, i) => [firstSeq + i, (m as { role: string }).role, JSON.stringify(m)]),
  ];
}

/** On a server: one connection, the insert prepared once per row count. Embedded: PGlite in this process, as loopd uses it. */
export async function openFloorStore({
  databaseUrl,
  dataDir,
}: {
  databaseUrl?: string;
  dataDir?: string;
}): Promise<FloorStore> {
  if (databaseUrl) {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    await client.query(CREATE_TABLE);
    return {
      async append(input) {
        const rows = input.messages.length;
        await client.query({ name: `floor_append_${rows}`, text: insertText(rows), values: insertValues(input) });
      },
      close: () => client.end(),
    };
  }
  const db = await PGlite.create(dataDir ? { dataDir } : {});
  await db.query(CREATE_TABLE);
  return {
    async append(input) {
      await db.query(insertText(input.messages.length), insertValues(input));
    },
    close: () => db.close(),
  };
}
