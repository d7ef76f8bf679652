import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.js";
import { loadDotEnv } from "../../src/cli/dot-env.js";
import { OperatorError } from "../../src/errors.js";
import { serve } from "../../src/serve.js";

/*
 * What `serve` checks before it opens the database, each failure an
 * operator's error naming the variable to fix. Each start here is given
 * its own folders; none of the failing ones may have opened the database.
 */
const scratch = mkdtempSync(path.join(tmpdir(), "loopd-checks-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let starts = 0;
function envFor(extra: Record<string, string>) {
  const dir = path.join(scratch, `start-${++starts}`);
  return {
    dataDir: path.join(dir, "data"),
    env: {
      LOG_LEVEL: "silent",
      DATA_DIR: path.join(dir, "data"),
      WORKSPACE_DIR: path.join(dir, "workspace"),
      PORT: "0",
      ...extra,
    },
  };
}

/** serve() with `extra`, expected to fail before the database was opened. */
async function refusedStart(extra: Record<string, string>): Promise<string> {
  const { env, dataDir } = envFor(extra);
  const error = await serve({ env }).then(
    (served) => served.stop().then(() => new Error("it started")),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OperatorError);
  expect(existsSync(dataDir)).toBe(false);
  return (error as Error).message;
}

describe("start-up checks, before the database is opened", () => {
  let taken: Server;
  afterAll(() => new Promise<void>((resolve) => (taken ? taken.close(() => resolve()) : resolve())));

  test("a PORT in use is one line naming it, before the database is opened", async () => {
    taken = createServer();
    await new Promise<void>((resolve) => taken.listen({ host: "127.0.0.1", port: 0 }, resolve));
    const port = (taken.address() as { port: number }).port;
    // Found before the database is opened (refusedStart checks DATA_DIR was not even made), not after its migrations.
    expect(await refusedStart({ PORT: String(port) })).toBe(
      `PORT ${port} is already in use on 127.0.0.1 (another loopd, or another server): stop that process or set PORT to a free port`,
    );
  });

  test("a HOST that is not an address of this machine, or not a host at all", async () => {
    expect(await refusedStart({ HOST: "192.0.2.1" })).toMatch(
      /^HOST 192\.0\.2\.1 is not an address of this machine: set HOST/,
    );
    expect(await refusedStart({ HOST: "no-such-host.invalid" })).toMatch(
      /^HOST no-such-host\.invalid is not a known host name or address/,
    );
  });

  test("a bad PRICES_FILE is named with what is wrong in it", async () => {
    const file = path.join(scratch, "prices.json");
    writeFileSync(file, JSON.stringify({ "my-model": { input: 1 } }));
    expect(await refusedStart({ PRICES_FILE: file })).toBe(`PRICES_FILE ${file}: "my-model".output: is required`);
    expect(await refusedStart({ PRICES_FILE: path.join(scratch, "missing.json") })).toMatch(
      /^PRICES_FILE .*missing\.json: cannot be read/,
    );
  });

  test("a bad TOOLS_FILE stops the start with one line naming the entry and the field", async () => {
    const file = path.join(scratch, "tools.json");
    writeFileSync(
      file,
      JSON.stringify({
        http: [
          {
            name: "lookup",
            input_schema: { type: "object" },
            url: "https://orders.example.com",
            secret: "${NO_SUCH_SECRET}",
          },
        ],
      }),
    );
    expect(await refusedStart({ TOOLS_FILE: file })).toBe(
      `TOOLS_FILE ${file}: http[0].secret: \${NO_SUCH_SECRET} is not set in the environment`,
    );
  });

  test("a DATA_DIR or WORKSPACE_DIR that cannot be created is named, and the start does not hang", async () => {
    const file = path.join(scratch, "a-file");
    writeFileSync(file, "");
    // Node's own recursive mkdir never returns on /proc/nope.
    const { env } = envFor({ DATA_DIR: "/proc/nope" });
    await expect(serve({ env })).rejects.toThrow(/^DATA_DIR \/proc\/nope cannot be created: no such file or folder/);
    expect(await refusedStart({ WORKSPACE_DIR: path.join(file, "ws") })).toBe(
      `WORKSPACE_DIR ${path.join(file, "ws")} cannot be created: a part of the path is a file, not a folder`,
    );
  });

  test("a DATABASE_URL without a scheme, or with another database's, is refused without showing it", async () => {
    const noScheme = await refusedStart({ DATABASE_URL: "localhost:5432" });
    expect(noScheme).toMatch(/^invalid configuration: DATABASE_URL: must start with postgres:\/\/ or postgresql:\/\//);
    const mysql = await refusedStart({ DATABASE_URL: "mysql://root:hunter2@localhost/loopd" });
    expect(mysql).toMatch(/^invalid configuration: DATABASE_URL: is a mysql:\/\/ URL, but loopd needs PostgreSQL/);
    expect(mysql).not.toContain("hunter2");
    await expect(serve({ env: envFor({ DATABASE_URL: "localhost:5432" }).env })).rejects.toBeInstanceOf(ConfigError);
    // An unencoded # in the password, a port past 65535: not a URL at all, and the message says what to check.
    for (const url of ["postgres://loopd:pa#ss@localhost/loopd", "postgres://localhost:99999/loopd"]) {
      const message = await refusedStart({ DATABASE_URL: url });
      expect(message).toMatch(
        /^invalid configuration: DATABASE_URL: is not a valid URL: percent-encode any @ : \/ \? # in the user or password/,
      );
      expect(message).not.toContain("pa#ss");
    }
  });

  test("a default provider without its key is refused; an OpenAI-compatible server's URL needs no key", async () => {
    expect(await refusedStart({ LLM_PROVIDER: "anthropic" })).toMatch(
      /^LLM_PROVIDER is anthropic but ANTHROPIC_API_KEY is not set/,
    );
    const { env } = envFor({ OPENAI_BASE_URL: "http://127.0.0.1:1/v1" });
    const served = await serve({ env });
    try {
      const conversation = (await post(served.url, "/conversations", {})) as { provider: string };
      // The URL alone makes OpenAI the default provider.
      expect(conversation.provider).toBe("openai");
    } finally {
      await served.stop();
    }
  });
});

describe("a model server that is down", () => {
  test("the run's error names the URL that did not answer", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen({ host: "127.0.0.1", port: 0 }, resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    // A user and password in the URL are the server's credentials: never in the run's error.
    const { env } = envFor({ OPENAI_BASE_URL: `http://alice:hunter2secret@127.0.0.1:${port}/v1` });
    const served = await serve({ env });
    try {
      const conversation = (await post(served.url, "/conversations", {})) as { id: string };
      const answer = (await post(served.url, `/conversations/${conversation.id}/messages`, { content: "hello" })) as {
        run: { status: string; error: { code: string; message: string } };
      };
      expect(answer.run.status).toBe("failed");
      expect(answer.run.error.code).toBe("provider_unavailable");
      // Every model down (here the only one, after its attempts): provider_unavailable, naming the model and the URL.
      expect(answer.run.error.message).toMatch(
        new RegExp(
          `^no model could answer: openai/\\S+: .*Could not reach the OpenAI API at http://127\\.0\\.0\\.1:${port}/v1: `,
        ),
      );
      expect(JSON.stringify(answer)).not.toContain("hunter2secret");
    } finally {
      await served.stop();
    }
  });
});

test('PORT of spaces is the default, never a port picked at random (Number(" ") is 0)', () => {
  expect(loadConfig({ PORT: " " }).server.port).toBe(3000);
  expect(loadConfig({ MAX_STEPS: "  " }).runs.maxSteps).toBe(10);
});

describe(".env", () => {
  test("is read from the working folder; a variable already set wins over it", () => {
    const dir = mkdtempSync(path.join(scratch, "dotenv-"));
    writeFileSync(
      path.join(dir, ".env"),
      '# a comment\nFROM_FILE=file\nexport SET_TWICE=file\n\nQUOTED="two\nlines"\n',
    );
    const env: NodeJS.ProcessEnv = { SET_TWICE: "environment" };
    expect(loadDotEnv({ cwd: dir, env })).toEqual({ file: path.join(dir, ".env"), names: ["FROM_FILE", "QUOTED"] });
    expect(env).toEqual({ FROM_FILE: "file", SET_TWICE: "environment", QUOTED: "two\nlines" });
    expect(loadDotEnv({ cwd: scratch, env })).toBeNull();
  });

  test("a line that is not NAME=value is an error naming the file and the line, not skipped", () => {
    const dir = mkdtempSync(path.join(scratch, "dotenv-"));
    writeFileSync(path.join(dir, ".env"), "PORT=3000\nLOG_LEVEL debug\n");
    expect(() => loadDotEnv({ cwd: dir, env: {} })).toThrow(
      `${path.join(dir, ".env")} line 2 is not NAME=value (a comment starts with #): "LOG_LEVEL debug"`,
    );
  });
});

async function post(base: string, route: string, body: unknown): Promise<unknown> {
  const res = await fetch(`${base}${route}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return res.json();
}
