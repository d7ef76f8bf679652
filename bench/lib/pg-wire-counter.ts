import { createConnection, createServer, type Socket } from "node:net";

export interface WireCounts {
  /** Statements executed: simple queries plus extended-protocol Executes. */
  statements: number;
  /** Round trips: each simple query and each Sync waits for the server's ReadyForQuery. */
  roundTrips: number;
  /** Transactions ended: a ReadyForQuery that finds the session idle after a statement ran (an autocommit statement, a COMMIT or a ROLLBACK). */
  transactions: number;
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
export async function startPgWireCounter(databaseUrl: string): Promise<PgWireCounter> {
  const target = new URL(databaseUrl);
  const counts: WireCounts = { statements: 0, roundTrips: 0, transactions: 0 };
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
    const fromClient = messageReader({ startup: true }, (type) => {
      if (type === "Q") {
        counts.statements++;
        counts.roundTrips++;
        statementSinceIdle = true;
      } else if (type === "E") {
        counts.statements++;
        statementSinceIdle = true;
      } else if (type === "S") {
        counts.roundTrips++;
      } else if (type === "startup-ssl") {
        client.destroy(new Error("pg-wire-counter relays plain connections only"));
      }
    });
    const fromServer = messageReader({ startup: false }, (type, firstByte) => {
      if (type !== "Z") return;
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
    counts: () => ({ ...counts }),
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Splits a byte stream into protocol messages (a type byte, then a length
 * that counts itself) and reports each one's type and first payload byte.
 * A client's first message has no type byte: the startup packet (or an SSL
 * request, reported as "startup-ssl"). A long message is reported from its
 * first bytes and the rest of it skipped as it streams past, not buffered.
 */
function messageReader(
  { startup }: { startup: boolean },
  onMessage: (type: string, firstByte: number | undefined) => void,
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
        if (pending.readInt32BE(at + 4) === 80877103) onMessage("startup-ssl", undefined);
        untyped = false;
        at += pending.readInt32BE(at);
        continue;
      }
      if (available < 5) break;
      const length = pending.readInt32BE(at + 1);
      const hasPayload = length > 4;
      if (hasPayload && available < 6) break;
      onMessage(String.fromCharCode(pending[at]!), hasPayload ? pending[at + 5] : undefined);
      at += 1 + length;
    }
    if (at > pending.length) {
      skip = at - pending.length;
      at = pending.length;
    }
    pending = pending.subarray(at);
  };
}
