import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { OperatorError } from "../../src/errors.js";
import { DataDirBusyError, holderOf, LOCK_FILE, lockDataDir } from "../../src/store/data-dir-lock.js";
import { openDatabase } from "../../src/store/db.js";
import { killAllHolders, startHolder } from "../helpers/data-dir-holder.js";

const scratch = mkdtempSync(path.join(tmpdir(), "loopd-lock-"));
afterAll(() => {
  killAllHolders();
  rmSync(scratch, { recursive: true, force: true });
});

let folders = 0;
const folder = () => {
  const dir = path.join(scratch, `data-${++folders}`);
  mkdirSync(dir);
  return dir;
};
const lockFileOf = (dir: string) => path.join(dir, LOCK_FILE);
const lockOf = (dir: string) => JSON.parse(readFileSync(lockFileOf(dir), "utf8")) as Record<string, unknown>;

describe("one process per embedded database folder", () => {
  test("a second open of a held folder in the same process is refused, and the first goes on", async () => {
    const dir = folder();
    const first = await openDatabase({ dataDir: dir });
    try {
      const error = await openDatabase({ dataDir: dir }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DataDirBusyError);
      expect((error as Error).message).toBe(`the embedded database in ${dir} is already open in this process`);
      await first.migrate();
      expect(await first.ping()).toBe(true);
    } finally {
      await first.close();
    }
    expect(existsSync(lockFileOf(dir))).toBe(false);
    // Closed, it opens again: the lock went with the close.
    await (await openDatabase({ dataDir: dir })).close();
  });

  test("a folder held by another live process is refused with one line naming the folder, the process and what it is", async () => {
    const dir = folder();
    const other = startHolder("hold", dir);
    expect(await other.said()).toBe("ready");
    expect(await other.said()).toBe("held");
    const error = await openDatabase({ dataDir: dir, program: "the test" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DataDirBusyError);
    expect((error as Error).message).toMatch(
      new RegExp(`^the embedded database in ${escape(dir)} is in use by process ${other.child.pid} \\(a test holder, since \\d{4}-\\d\\d-\\d\\dT[^)]+\\); only one process may open it: stop that one first`),
    );
    expect((error as Error).message).not.toContain("\n");
    expect(holderOf(dir)).toMatchObject({ pid: other.child.pid, program: "a test holder" });
    // The refused opener left the holder's lock as it was.
    expect(lockOf(dir)).toMatchObject({ pid: other.child.pid });
    await other.end();
    expect(existsSync(lockFileOf(dir))).toBe(false);
  });

  test("a lock left by a process killed with SIGKILL is taken over", async () => {
    const dir = folder();
    const other = startHolder("hold", dir);
    await other.said();
    expect(await other.said()).toBe("held");
    await other.kill();
    expect(lockOf(dir)).toMatchObject({ pid: other.child.pid });
    expect(holderOf(dir)).toBeNull();

    const database = await openDatabase({ dataDir: dir, program: "the taker" });
    expect(lockOf(dir)).toMatchObject({ pid: process.pid, program: "the taker" });
    await database.close();
  });

  test("stale locks are told from live ones: a reused pid, this process's own pid, another host's lock kept fresh or not, an unreadable file", async () => {
    const dir = folder();
    const write = (holder: Record<string, unknown>, ageMs = 0) => {
      writeFileSync(lockFileOf(dir), JSON.stringify({ program: "an old loopd", started_at: "2026-01-01T00:00:00.000Z", token: "old", ...holder }));
      const at = new Date(Date.now() - ageMs);
      utimesSync(lockFileOf(dir), at, at);
    };
    const takenOver = () => {
      const lock = lockDataDir(dir, { program: "the test" });
      expect(lockOf(dir)).toMatchObject({ pid: process.pid, program: "the test" });
      lock.release();
      return true;
    };
    // pid 1 is alive, but started at another time than the one recorded: its pid was given to a new process.
    write({ pid: 1, host: hostname(), pid_started: "1" });
    expect(takenOver()).toBe(true);
    // A container restarted: its new process has the old one's pid.
    write({ pid: process.pid, host: hostname() });
    expect(takenOver()).toBe(true);
    // Another host can only be judged by the file's time, which its holder keeps fresh.
    write({ pid: 4242, host: "another-host" }, 60_000);
    expect(takenOver()).toBe(true);
    write({ pid: 4242, host: "another-host" }, 1_000);
    expect(() => lockDataDir(dir, { program: "the test" })).toThrow(/in use by process 4242 on host another-host \(an old loopd/);
    // A file that is not a lock (a crash while it was written, a disk that filled up).
    writeFileSync(lockFileOf(dir), "{not json");
    expect(takenOver()).toBe(true);
  });

  test("several processes taking over one stale lock at the same moment: exactly one gets it", async () => {
    const dir = folder();
    writeFileSync(lockFileOf(dir), JSON.stringify({ pid: 2 ** 22 + 1, host: hostname(), program: "a dead loopd", started_at: "", token: "dead" }));
    const racers = Array.from({ length: 6 }, () => startHolder("race", dir));
    for (const racer of racers) expect(await racer.said()).toBe("ready");
    for (const racer of racers) racer.go();
    const outcomes = await Promise.all(racers.map((r) => r.said()));
    expect(outcomes.filter((o) => o === "held")).toHaveLength(1);
    const winner = racers[outcomes.indexOf("held")]!;
    expect(outcomes.filter((o) => o !== "held").every((o) => o.includes(`in use by process ${winner.child.pid}`) || o.includes("being opened by another process"))).toBe(true);
    expect(lockOf(dir)).toMatchObject({ pid: winner.child.pid });
    await Promise.all(racers.map((r) => r.end()));
  }, 60_000);

  test("a folder that cannot be created or written is an operator's error naming DATA_DIR, at once", async () => {
    const file = path.join(scratch, "a-file");
    writeFileSync(file, "");
    // /sys exists, and nobody may create a file there, root included.
    for (const dataDir of ["/proc/loopd-nope", path.join(file, "data"), "/sys"]) {
      const error = await openDatabase({ dataDir }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OperatorError);
      expect((error as Error).message).toMatch(new RegExp(`^DATA_DIR ${escape(dataDir)} cannot be (created|written): `));
    }
    expect(((await openDatabase({ dataDir: "/sys" }).catch((e: unknown) => e)) as Error).message).toBe("DATA_DIR /sys cannot be written: permission denied");
  });

  test("a damaged folder is refused with what to do, never PGlite's Aborted(), and its lock is released", async () => {
    const dir = folder();
    const database = await openDatabase({ dataDir: dir });
    await database.migrate();
    await database.close();
    // Its control file overwritten: PGlite's WebAssembly traps as it opens it.
    writeFileSync(path.join(dir, "pgdata", "global", "pg_control"), Buffer.alloc(8192, 0x5a));
    const error = await openDatabase({ dataDir: dir }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OperatorError);
    expect((error as Error).message).toBe(
      `the embedded database in ${dir} could not be opened: its files are damaged, or were written by another version of PGlite; restore the folder from a backup, or move it away to start empty`,
    );
    expect(existsSync(lockFileOf(dir))).toBe(false);
  });

  test("a folder from before the lock (the database's files at its top) opens where it is, with the lock beside them", async () => {
    const dir = folder();
    const database = await openDatabase({ dataDir: dir });
    await database.migrate();
    await database.db.execute("create table kept (x int)" as never);
    await database.db.execute("insert into kept values (42)" as never);
    await database.close();
    // As an older loopd left it: PGlite's files directly in DATA_DIR.
    const legacy = folder();
    rmSync(legacy, { recursive: true });
    await import("node:fs/promises").then((fs) => fs.rename(path.join(dir, "pgdata"), legacy));
    const reopened = await openDatabase({ dataDir: legacy });
    expect(existsSync(lockFileOf(legacy))).toBe(true);
    expect(existsSync(path.join(legacy, "pgdata"))).toBe(false);
    expect(await reopened.db.execute("select x from kept" as never)).toMatchObject({ rows: [{ x: 42 }] });
    await reopened.close();
  });
});

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}
