import { createSocket } from "node:dgram";
import type { AddressInfo } from "node:net";

export interface DnsServer {
  /** `127.0.0.1:<port>`, for `WEBHOOK_DNS_SERVERS`. */
  address: string;
  /** The names asked for, in order (each query once). */
  asked: string[];
  close(): Promise<void>;
}

/**
 * A tiny DNS server on 127.0.0.1 (UDP): A queries for names in `answers`
 * get that IPv4 address, names in `hang` get no answer at all (a DNS that
 * never answers), anything else NXDOMAIN; other query types get an empty
 * answer.
 */
export async function startDnsServer({
  answers,
  hang,
}: {
  answers: Record<string, string>;
  hang: string[];
}): Promise<DnsServer> {
  const socket = createSocket("udp4");
  const asked: string[] = [];
  socket.on("message", (query, from) => {
    const { name, end } = questionOf(query);
    const type = query.readUInt16BE(end);
    asked.push(name);
    if (hang.includes(name)) return;
    const address = answers[name];
    const found = address !== undefined && type === 1;
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2); // the id
    header.writeUInt16BE(0x8180 | (address === undefined ? 3 : 0), 2); // a response, recursion available; NXDOMAIN when unknown
    header.writeUInt16BE(1, 4); // one question
    header.writeUInt16BE(found ? 1 : 0, 6);
    const question = query.subarray(12, end + 4);
    const answer = found
      ? Buffer.concat([
          Buffer.from([0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4]),
          Buffer.from(address.split(".").map(Number)),
        ])
      : Buffer.alloc(0);
    socket.send(Buffer.concat([header, question, answer]), from.port, from.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
  return {
    address: `127.0.0.1:${(socket.address() as AddressInfo).port}`,
    asked,
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  };
}

/** The question's name (lowercased) and where its type begins. */
function questionOf(query: Buffer): { name: string; end: number } {
  const labels: string[] = [];
  let at = 12;
  while (query[at]! > 0) {
    labels.push(query.subarray(at + 1, at + 1 + query[at]!).toString("ascii"));
    at += 1 + query[at]!;
  }
  return { name: labels.join(".").toLowerCase(), end: at + 1 };
}
