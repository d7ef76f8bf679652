import { spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { hostname, tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, test } from "vitest";
import { OperatorError } from "../../src/errors.js";
import { DataDirBusyError, holderOf, LOCK_FILE, lockDataDir } from "../../src/store/data-dir-lock.js";
import { openDatabase } from "../../src/store/db.js";
import { killAllHolders, startHolder } from "../support/helpers/data-dir-holder.js";
import { processState, spawnUnreaped } from "../support/helpers/non-reaping-parent.js";
import { programArgs, repoRoot } from "../e2e/run-program.js";

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
      expect(await first.ping()).toBe("ok");
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
      new RegExp(
        `^the embedded database in ${escape(dir)} is in use by process ${other.child.pid} \\(a test holder, since \\d{4}-\\d\\d-\\d\\dT[^)]+\\); only one process may open it: stop that one first`,
      ),
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

  test("a lock left by a killed process its parent has not reaped (a zombie) is taken over at once", async () => {
    const dir = folder();
    const holder = await spawnUnreaped(process.execPath, [...programArgs("test/store/hold-data-dir.ts"), "hold", dir], {
      cwd: repoRoot,
    });
    try {
      const lines = createInterface({ input: holder.parent.stdout! })[Symbol.asyncIterator]();
      expect((await lines.next()).value).toBe("ready");
      expect((await lines.next()).value).toBe("held");
      expect(lockOf(dir)).toMatchObject({ pid: holder.pid });
      process.kill(holder.pid, "SIGKILL");
      expect(await holder.exited).toEqual({ code: null, signal: "SIGKILL" });
      // Exited, and still in the process table: kill(pid, 0) succeeds on it.
      expect(processState(holder.pid)).toBe("Z");
      expect(holderOf(dir)).toBeNull();

      const database = await openDatabase({ dataDir: dir, program: "the taker" });
      expect(lockOf(dir)).toMatchObject({ pid: process.pid, program: "the taker" });
      await database.close();
    } finally {
      holder.parent.kill("SIGKILL");
    }
  }, 60_000);

  test("stale locks are told from live ones: a reused pid, this process's own pid, another host's lock kept fresh or not, an unreadable file", async () => {
    const dir = folder();
    const write = (holder: Record<string, unknown>, ageMs = 0) => {
      writeFileSync(
        lockFileOf(dir),
        JSON.stringify({ program: "an old loopd", started_at: "2026-01-01T00:00:00.000Z", token: "old", ...holder }),
      );
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
    expect(() => lockDataDir(dir, { program: "the test" })).toThrow(
      /in use by process 4242 on host another-host \(an old loopd/,
    );
    // A file that is not a lock (a crash while it was written, a disk that filled up).
    writeFileSync(lockFileOf(dir), "{not json");
    expect(takenOver()).toBe(true);
  });

  test("a holder in another pid namespace (another container on this machine, same hostname) is judged by its lock's time, not by a pid of ours", async () => {
    const dir = folder();
    // pid 1 of a new pid namespace: the Dockerfile's loopd is pid 1 too.
    const child = spawn(
      "unshare",
      ["--pid", "--fork", "--mount-proc", process.execPath, ...programArgs("test/store/hold-data-dir.ts"), "hold", dir],
      { cwd: repoRoot },
    );
    const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
    try {
      expect((await lines.next()).value).toBe("ready");
      expect((await lines.next()).value).toBe("held");
      expect(lockOf(dir)).toMatchObject({ pid: 1, host: hostname() });
      const error = await openDatabase({ dataDir: dir }).catch((e: unknown) => e);
      expect((error as Error).message).toMatch(
        /is in use by process 1 of another container on this machine \(a test holder, .*its lock lapses 30 s after that process stops/,
      );
    } finally {
      child.kill("SIGKILL");
    }
    // Once it is gone, its lock lapses: its time is no longer kept fresh.
    const old = new Date(Date.now() - 60_000);
    utimesSync(lockFileOf(dir), old, old);
    await (await openDatabase({ dataDir: dir })).close();
  });

  test("a lock from before a reboot is stale whatever its pid; two names of one folder take one lock", async () => {
    const dir = folder();
    writeFileSync(
      lockFileOf(dir),
      JSON.stringify({
        pid: process.ppid,
        host: hostname(),
        boot_id: "an-earlier-boot",
        program: "a loopd before the reboot",
        started_at: "",
        token: "old",
      }),
    );
    const lock = lockDataDir(dir, { program: "the test" });
    expect(lockOf(dir)).toMatchObject({ pid: process.pid });
    // A relative path and a symlink name the same folder: the same lock, refused in this process.
    const link = path.join(scratch, `link-${folders}`);
    symlinkSync(dir, link);
    expect(() => lockDataDir(link, { program: "the test" })).toThrow(/already open in this process/);
    expect(() => lockDataDir(path.relative(process.cwd(), dir), { program: "the test" })).toThrow(
      /already open in this process/,
    );
    lock.release();
  });

  test("a lock file that cannot be read (a folder in its place) is an error naming it, not a wait", () => {
    const dir = folder();
    mkdirSync(lockFileOf(dir));
    expect(() => lockDataDir(dir, { program: "the test" })).toThrow(`${lockFileOf(dir)} cannot be read (`);
  });

  test("several processes taking over one stale lock at the same moment: exactly one gets it", async () => {
    const dir = folder();
    writeFileSync(
      lockFileOf(dir),
      JSON.stringify({ pid: 2 ** 22 + 1, host: hostname(), program: "a dead loopd", started_at: "", token: "dead" }),
    );
    const racers = Array.from({ length: 6 }, () => startHolder("race", dir));
    for (const racer of racers) expect(await racer.said()).toBe("ready");
    for (const racer of racers) racer.go();
    const outcomes = await Promise.all(racers.map((r) => r.said()));
    expect(outcomes.filter((o) => o === "held")).toHaveLength(1);
    const winner = racers[outcomes.indexOf("held")]!;
    expect(
      outcomes
        .filter((o) => o !== "held")
        .every(
          (o) => o.includes(`in use by process ${winner.child.pid}`) || o.includes("being opened by another process"),
        ),
    ).toBe(true);
    expect(lockOf(dir)).toMatchObject({ pid: winner.child.pid });
    await Promise.all(racers.map((r) => r.end()));
  }, 60_000);

  test("a folder that cannot be created or written is an operator's error naming DATA_DIR, at once", async () => {
    const file = path.join(scratch, "a-file");
    writeFileSync(file, "");
    // An empty folder of /sys: it exists, and nobody may create a file there, root included.
    const unwritable = "/sys/kernel/software_nodes";
    for (const dataDir of ["/proc/loopd-nope", path.join(file, "data"), unwritable]) {
      const error = await openDatabase({ dataDir }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OperatorError);
      expect((error as Error).message).toMatch(
        new RegExp(`^DATA_DIR ${escape(dataDir)} cannot be (created|written): `),
      );
    }
    expect(((await openDatabase({ dataDir: unwritable }).catch((e: unknown) => e)) as Error).message).toMatch(
      new RegExp(`^DATA_DIR ${unwritable} cannot be written: (permission denied|operation not permitted)$`),
    );
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

describe("the folder itself: loopd's, or new", () => {
  test("refused before anything is written: the inside of a loopd folder, another PostgreSQL's data folder, a folder of other files", async () => {
    const dir = folder();
    await (await openDatabase({ dataDir: dir })).close();
    const inside = path.join(dir, "pgdata");
    await expect(openDatabase({ dataDir: inside })).rejects.toThrow(
      `DATA_DIR ${inside} is the inside of loopd's folder ${dir}: set DATA_DIR to that folder`,
    );
    expect(existsSync(path.join(inside, LOCK_FILE))).toBe(false);

    const postgres15 = folder();
    writeFileSync(path.join(postgres15, "PG_VERSION"), "15\n");
    await expect(openDatabase({ dataDir: postgres15 })).rejects.toThrow(
      `DATA_DIR ${postgres15} holds a PostgreSQL 15 data folder, not loopd's embedded database`,
    );
    expect(existsSync(path.join(postgres15, LOCK_FILE))).toBe(false);

    const home = folder();
    writeFileSync(path.join(home, "notes.txt"), "mine");
    await expect(openDatabase({ dataDir: home })).rejects.toThrow(
      `DATA_DIR ${home} holds other files (notes.txt) and no loopd database: set DATA_DIR to a new or empty folder`,
    );
    expect(existsSync(path.join(home, "pgdata"))).toBe(false);
  });

  test("a command that only reads (replay, db:export) is refused a folder with no database, and makes none", async () => {
    const missing = path.join(scratch, "mistyped");
    await expect(openDatabase({ dataDir: missing, mustExist: true })).rejects.toThrow(
      `there is no embedded database in ${missing} (DATA_DIR): the folder does not exist`,
    );
    expect(existsSync(missing)).toBe(false);
    const empty = folder();
    await expect(openDatabase({ dataDir: empty, mustExist: true })).rejects.toThrow(
      /there is no embedded database in .* \(DATA_DIR\): is DATA_DIR the folder loopd serves from\?/,
    );
    expect(readdirSync(empty)).toEqual([]);
  });
});
