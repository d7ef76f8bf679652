import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { newWebhookSecret, startWebhookReceiver } from "../../test/support/helpers/webhook-receiver.js";
import { createBenchDatabase } from "../lib/bench-database.js";
import { percentile } from "../lib/measure.js";
import { startLoopdProcess } from "../lib/start-loopd-process.js";

export interface WebhookLatency {
  runs: number;
  /** ms from a run's end (its `completed_at`, the database's clock on this machine) to its webhook's arrival at the receiver. */
  p50: number;
  p99: number;
  max: number;
}

/**
 * webhooks: Webhook latency: a loopd process (mock provider, so a run is one
 * quick step) with a webhook on its conversation, and a receiver in the
 * bench process that verifies each request; runs one after another, each
 * timed from its end in the database to the receiver reading its webhook
 * (the outbox row written with the end, the NOTIFY, the claim, the signed POST).
 */
export async function measureWebhookLatency({
  serverUrl,
  runs,
  logLevel,
}: {
  serverUrl: string | undefined;
  runs: number;
  logLevel: string;
}): Promise<WebhookLatency> {
  const secret = newWebhookSecret();
  const receiver = await startWebhookReceiver(secret);
  const database = await createBenchDatabase(serverUrl);
  const workspace = mkdtempSync(path.join(os.tmpdir(), "loopd-bench-webhooks-"));
  const loopd = await startLoopdProcess({
    env: {
      ...database.env,
      LLM_PROVIDER: "mock",
      LOG_LEVEL: logLevel,
      WORKSPACE_DIR: workspace,
      WEBHOOK_SECRET: secret,
      WEBHOOK_ALLOW_PRIVATE: "true",
    },
  });
  const post = async (at: string, body: unknown) => {
    const res = await fetch(`${loopd.url}${at}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`POST ${at}: ${res.status} ${await res.text()}`);
    return (await res.json()) as any;
  };
  try {
    // Each tenant signs with a secret of its own, derived from WEBHOOK_SECRET: the receiver verifies with the tenant's.
    const tenantSecret = await fetch(`${loopd.url}/webhooks/secret`).then(
      (res) => res.json() as Promise<{ secret: string }>,
    );
    receiver.secret = tenantSecret.secret;
    const conv = (await post("/conversations", { webhook: { url: receiver.url, events: ["run.completed"] } }))
      .id as string;
    const samples: number[] = [];
    const warmup = 5;
    for (let i = 0; i < runs + warmup; i++) {
      const { run } = await post(`/conversations/${conv}/messages`, { content: `Hello ${i}` });
      const got = (await receiver.waitFor(i + 1)).at(-1)!;
      if (got.id !== `${run.id}.run.completed` || !got.verified)
        throw new Error(`unexpected webhook ${got.id} (verified: ${got.verified !== null})`);
      if (i >= warmup) samples.push(got.at - Date.parse(run.completed_at));
    }
    const sorted = samples.sort((a, b) => a - b);
    return { runs, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: sorted.at(-1)! };
  } finally {
    await loopd.stop();
    await receiver.close();
    await database.drop();
    rmSync(workspace, { recursive: true, force: true });
  }
}
