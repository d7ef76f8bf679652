/**
 * `npm run keys` as a user runs it (src/store/keys-cli.ts as a process), on
 * the test's database kind (the embedded one, or Postgres): a key made is
 * printed once and works against a loopd on the same database; list never
 * shows it; revoke ends it; mistakes are one line and exit 1.
 */
import { afterAll, beforeAll, expect, test, vi } from "vitest";
import { killAllLoopd, spawnLoopd } from "./loopd-process.js";
import { createProcessDatabase } from "./process-database.js";
import { runProgram } from "./run-program.js";

// Each test starts programs through tsx, slowly on a busy machine.
vi.setConfig({ testTimeout: 150_000, hookTimeout: 150_000 });

let database: Awaited<ReturnType<typeof createProcessDatabase>>;
beforeAll(async () => {
  database = await createProcessDatabase("loopd-keys-");
});
afterAll(async () => {
  await killAllLoopd();
  await database?.drop();
});
const keys = (...args: string[]) => runProgram("src/cli/keys.ts", { args, env: database.env });

test("create prints the key once, list shows it without the key, a loopd with keys on takes it, revoke ends it", async () => {
  const made = await keys("create", "--tenant", "acme", "--name", "ci");
  expect(made.code).toBe(0);
  const [said, key] = made.stdout.trim().split("\n");
  expect(said).toMatch(/^key (key_[a-z0-9]+) for tenant acme \(ci\); shown this once, keep it:$/);
  expect(key).toMatch(/^lpd_[A-Za-z0-9_-]{43}$/);
  const id = /^key (key_[a-z0-9]+)/.exec(said!)![1]!;

  const listed = await keys("list", "--tenant", "acme");
  expect(listed.code).toBe(0);
  expect(listed.stdout.trim()).toMatch(
    new RegExp(
      `^id +tenant +name +created +last used +revoked\\n${id} +acme +ci +\\d{4}-\\d\\d-\\d\\dT[\\d:]+Z +- +-$`,
    ),
  );
  expect(listed.stdout).not.toContain(key);

  const loopd = await spawnLoopd({ env: { ...database.env, API_KEYS_REQUIRED: "true" } });
  expect((await fetch(`${loopd.url}/conversations`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
  expect((await fetch(`${loopd.url}/conversations`)).status).toBe(401);
  loopd.child.kill("SIGTERM");
  await loopd.exited;

  const revoked = await keys("revoke", id);
  expect(revoked.code).toBe(0);
  expect(revoked.stdout).toMatch(new RegExp(`^key ${id} of tenant acme revoked at `));
  const after = await keys("list");
  expect(after.stdout).toMatch(new RegExp(`${id} +acme +ci +\\S+ +\\S+ +\\d{4}-`));
  const again = await spawnLoopd({ env: { ...database.env, API_KEYS_REQUIRED: "true" } });
  expect((await fetch(`${again.url}/conversations`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(401);
});

test("a first start with keys on prints the key it makes even when the log says nothing (LOG_LEVEL=silent)", async () => {
  await killAllLoopd();
  const fresh = await createProcessDatabase("loopd-first-key-");
  try {
    const loopd = await spawnLoopd({ env: { ...fresh.env, API_KEYS_REQUIRED: "true", LOG_LEVEL: "silent" } });
    const printed = loopd.output().match(/lpd_[A-Za-z0-9_-]{43}/g) ?? [];
    expect(printed).toHaveLength(1);
    expect(
      (await fetch(`${loopd.url}/conversations`, { headers: { authorization: `Bearer ${printed[0]}` } })).status,
    ).toBe(200);
    loopd.child.kill("SIGTERM");
    await loopd.exited;
  } finally {
    await fresh.drop();
  }
});

test("mistakes are one line and exit 1", async () => {
  await killAllLoopd();
  for (const [args, line] of [
    [["create"], /^keys cannot run: create needs --tenant <name>; usage: /],
    [["create", "--tenant", "no spaces"], /^keys cannot run: --tenant "no spaces" must be 1–64 of/],
    [["revoke"], /^keys cannot run: revoke needs the key's id/],
    [["revoke", "key_nope"], /^keys cannot run: no key key_nope \(npm run keys -- list shows them\)$/],
    [["rotate"], /^keys cannot run: usage: npm run keys -- create/],
  ] as const) {
    const run = await keys(...args);
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toMatch(line);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
  }
});
