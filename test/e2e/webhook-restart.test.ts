import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, test, vi } from "vitest";
import { testDatabaseKind } from "../support/helpers/test-database.js";
import { newWebhookSecret, startWebhookReceiver, type WebhookReceiver } from "../support/helpers/webhook-receiver.js";
import { createProcessDatabase } from "./process-database.js";
import { loopdClient } from "./loopd-client.js";
import { killAllLoopd, killProcess, sleep, spawnLoopd, type LoopdProcess } from "./loopd-process.js";

// Real processes, each compiling the sources at start: bounds, not measures.
vi.setConfig({ testTimeout: 150_000, hookTimeout: 150_000 });

/*
 * The outbox is durable: a webhook still pending when loopd is killed
 * (SIGKILL, no shutdown of any kind) is delivered by the next loopd started
 * on the same database, under the same webhook-id.
 */

const SECRET = newWebhookSecret();
let database: Awaited<ReturnType<typeof createProcessDatabase>> | undefined;
let workspaceDir: string;
let receiver: WebhookReceiver;
let loopd: LoopdProcess;
const client = loopdClient(() => loopd.url);

beforeAll(async () => {
  workspaceDir = mkdtempSync(path.join(tmpdir(), "loopd-webhook-ws-"));
  database = await createProcessDatabase("loopd-webhook-db-");
  receiver = await startWebhookReceiver(SECRET);
});

afterAll(async () => {
  await killAllLoopd();
  await receiver?.close();
  await database?.drop();
  if (workspaceDir) rmSync(workspaceDir, { recursive: true, force: true });
});

const start = async () =>
  (loopd = await spawnLoopd({
    env: {
      ...database!.env,
      LLM_PROVIDER: "mock",
      WORKSPACE_DIR: workspaceDir,
      LOG_LEVEL: "warn",
      WEBHOOK_SECRET: SECRET,
      WEBHOOK_ALLOW_PRIVATE: "true",
      WEBHOOK_TIMEOUT_MS: "2000",
      WEBHOOK_RETRY_BASE_MS: "300",
    },
  }));

test(`on ${testDatabaseKind}: a webhook pending when loopd is killed is delivered by the next loopd, under the same id`, async () => {
  receiver.answer = () => ({ status: 500 });
  await start();
  // Signed with the tenant's own secret, derived from the master: the same from every loopd.
  receiver.secret = ((await fetch(`${loopd.url}/webhooks/secret`).then((r) => r.json())) as { secret: string }).secret;
  const conv = await client.createConversation({ webhook: { url: receiver.url } });
  const { run } = await client.send(conv.id, "Hello");
  expect(run.status).toBe("completed");
  const [first] = await receiver.waitFor(1);
  expect(first!.id).toBe(`${run.id}.run.completed`);
  await killProcess(loopd);
  // From here on the receiver takes it; nothing answers for the run until a new loopd starts.
  receiver.answer = () => ({ status: 200 });
  const triedBefore = receiver.received.length;
  await start();
  const got = await receiver.waitFor(triedBefore + 1, 60_000);
  const delivered = got.at(-1)!;
  expect(delivered.id).toBe(`${run.id}.run.completed`);
  expect(delivered.verified).toMatchObject({
    type: "run.completed",
    data: { run: { id: run.id, status: "completed", completed_at: run.completed_at } },
  });
  // Recorded: the 500s before the kill (those that were recorded before it), then the 200.
  let outbox: any;
  for (let i = 0; i < 100; i++) {
    outbox = (
      await fetch(`${loopd.url}/conversations/${conv.id}/runs/${run.id}/webhooks`).then((r) => r.json() as Promise<any>)
    ).data[0];
    if (outbox.status === "delivered") break;
    await sleep(50);
  }
  expect(outbox.status).toBe("delivered");
  expect(outbox.attempts.at(-1)).toMatchObject({ status_code: 200, error: null });
  expect(outbox.attempts.slice(0, -1).every((a: any) => a.status_code === 500)).toBe(true);
});
