import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

/** A webhook as the receiver got it: verified with the standardwebhooks package, or not. */
export interface ReceivedWebhook {
  id: string;
  /** When it arrived (Date.now(), once its body was read). */
  at: number;
  headers: IncomingMessage["headers"];
  body: string;
  /** `Webhook.verify`'s answer: the parsed body; null when the signature did not verify. */
  verified: { type: string; timestamp: string; data: { run: Record<string, unknown> } } | null;
}

/** What the receiver does with a request: answer with a status (and headers), or never answer. */
export type Answer = { status: number; headers?: Record<string, string> } | "hang";

export interface WebhookReceiver {
  url: string;
  /** What it verifies with; set it to the tenant's (`GET /webhooks/secret`) once loopd is up. */
  secret: string;
  received: ReceivedWebhook[];
  /** How it answers the next requests (a function of the request's number, from 1); default: 200. */
  answer: (n: number) => Answer;
  /** Resolves once `count` requests have come in all. */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

/** A real HTTP receiver on 127.0.0.1 that verifies every request with `Webhook.verify`. */
export async function startWebhookReceiver(secret: string): Promise<WebhookReceiver> {
  const waiting: { count: number; resolve: () => void }[] = [];
  const hung: ServerResponse[] = [];
  const receiver: WebhookReceiver = {
    url: "",
    secret,
    received: [],
    answer: () => ({ status: 200 }),
    async waitFor(count, timeoutMs = 20_000) {
      if (receiver.received.length < count) {
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(
            () =>
              reject(
                new Error(`the receiver got ${receiver.received.length} of ${count} webhooks within ${timeoutMs} ms`),
              ),
            timeoutMs,
          );
          waiting.push({ count, resolve: () => (clearTimeout(timer), resolve()) });
        });
      }
      return receiver.received;
    },
    close: async () => {
      for (const res of hung) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    const verified = verifyWebhook(receiver.secret, { body, headers: req.headers }) as ReceivedWebhook["verified"];
    receiver.received.push({
      id: String(req.headers["webhook-id"]),
      at: Date.now(),
      headers: req.headers,
      body,
      verified,
    });
    const answer = receiver.answer(receiver.received.length);
    for (const w of waiting.filter((w) => receiver.received.length >= w.count)) {
      waiting.splice(waiting.indexOf(w), 1);
      w.resolve();
    }
    if (answer === "hang") {
      hung.push(res);
      return;
    }
    res.writeHead(answer.status, answer.headers ?? {});
    res.end("ok");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return receiver;
}

/** A fresh Standard Webhooks secret. */
export const newWebhookSecret = () =>
  `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString("base64")}`;

/** What `Webhook.verify` with `secret` says of a webhook received: its parsed body, or null when no signature in it matches. */
export function verifyWebhook(secret: string, { body, headers }: Pick<ReceivedWebhook, "body" | "headers">): unknown {
  try {
    return new Webhook(secret).verify(body, headers as Record<string, string>);
  } catch {
    return null;
  }
}
