import { createConnection, createServer, type Socket } from "node:net";

export interface WireCounts {
  /** Statements executed: simple queries plus extended-protocol Executes. */
  statements: number;
  /** Round trips: each simple query and each Sync waits for the server's ReadyForQuery. */
  roundTrips: number;
  /** Transactions ended: a ReadyForQuery that finds the session idle after a statement ran (an autocommit statement, a COMMIT or a ROLLBACK). */
  transactions: number;
  /** NOTIFYs the server delivered to a LISTEN of a client (NotificationResponse messages). */
  notifications: number;
  /** Statements whose text matched each of `kinds` (by its first bytes; a named statement only when it is parsed). */
  kinds: Record<string, number>;
}

export interface PgWireCounter {
  /** `databaseUrl` with its host and port pointed at the counter. */
  url: string;
  counts(): WireCounts;
  close(): Promise<void>;
}

/**
 * A TCP relay between clients and a Postgres server that reads the protocol
 * messages going through and counts them, so what any client sends (loopd in
 * its own process, whichever version) is counted the same way without
 * pg_stat_statements. It relays bytes unchanged; it only adds the hop's
 * latency. Plain connections only (an SSL request is refused).
 */
export async function startPgWireCounter(
  databaseUrl: string,
  {
    kinds = {},
  }: {
    /** Statements to count apart, by a pattern of their text's first bytes (of a simple Query or a Parse). */
    kinds?: Record<string, RegExp>;
  } = {},
): Promise<PgWireCounter> {
  const target = new URL(databaseUrl);
  const counts: WireCounts = {
    statements: 0,
    roundTrips: 0,
    transactions: 0,
    notifications: 0,
    kinds: Object.fromEntries(Object.keys(kinds).map((kind) => [kind, 0])),
  };
  const classify = (text: string) => {
    for (const [kind, pattern] of Object.entries(kinds)) if (pattern.test(text)) counts.kinds[kind]!++;
  };
  const sockets = new Set<Socket>();

  const server = createServer((client) => {
    const upstream = createConnection({ host: target.hostname, port: Number(target.port || 5432) });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
    }
    let statementSinceIdle = false;
    const fromClient = messageReader({ startup: true }, (type, head) => {
      if (type === "Q") {
        counts.statements++;
        counts.roundTrips++;
        statementSinceIdle = true;
        classify(head.toString("utf8"));
      } else if (type === "P") {
        // The statement's name (a C string, empty when unnamed), then its text.
        classify(head.subarray(head.indexOf(0) + 1).toString("utf8"));
      } else if (type === "E") {
        counts.statements++;
        statementSinceIdle = true;
      } else if (type === "S") {
        counts.roundTrips++;
      } else if (type === "startup-ssl") {
        client.destroy(new Error("pg-wire-counter relays plain connections only"));
      }
    });
    const fromServer = messageReader({ startup: false }, (type, head) => {
      if (type === "A") counts.notifications++;
      if (type !== "Z") return;
      const firstByte = head[0];
      // ReadyForQuery's status: I idle, T in a transaction, E in a failed one.
      if (firstByte === 0x49 && statementSinceIdle) counts.transactions++;
      if (firstByte === 0x49) statementSinceIdle = false;
    });
    client.on("data", (chunk: Buffer) => {
      fromClient(chunk);
      upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => {
      fromServer(chunk);
      client.write(chunk);
    });
    client.on("end", () => upstream.end());
    upstream.on("end", () => client.end());
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  const url = new URL(databaseUrl);
  url.hostname = "127.0.0.1";
  url.port = String(typeof address === "object" && address ? address.port : 0);
  return {
    url: url.toString(),
    counts: () => ({ ...counts, kinds: { ...counts.kinds } }),
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** How much of a message's payload is read: enough of a statement's text to tell which it is. */
const HEAD_BYTES = 120;

/**
 * Splits a byte stream into protocol messages (a type byte, then a length
 * that counts itself) and reports each one's type and the first bytes of its
 * payload (up to HEAD_BYTES). A client's first message has no type byte: the
 * startup packet (or an SSL request, reported as "startup-ssl"). A long
 * message is reported from its first bytes and the rest of it skipped as it
 * streams past, not buffered.
 */
function messageReader(
  { startup }: { startup: boolean },
  onMessage: (type: string, head: Buffer) => void,
): (chunk: Buffer) => void {
  let pending: Buffer = Buffer.alloc(0);
  let untyped = startup;
  let skip = 0;
  return (chunk) => {
    if (skip >= chunk.length) {
      skip -= chunk.length;
      return;
    }
    chunk = chunk.subarray(skip);
    skip = 0;
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    let at = 0;
    for (;;) {
      const available = pending.length - at;
      if (untyped) {
        if (available < 8) break;
        if (pending.readInt32BE(at + 4) === 80877103) onMessage("startup-ssl", Buffer.alloc(0));
        untyped = false;
        at += pending.readInt32BE(at);
        continue;
      }
      if (available < 5) break;
      const length = pending.readInt32BE(at + 1);
      const head = Math.min(length - 4, HEAD_BYTES);
      if (available < 5 + head) break;
      onMessage(String.fromCharCode(pending[at]!), pending.subarray(at + 5, at + 5 + head));
      at += 1 + length;
    }
    if (at > pending.length) {
      skip = at - pending.length;
      at = pending.length;
    }
    pending = pending.subarray(at);
  };
}
