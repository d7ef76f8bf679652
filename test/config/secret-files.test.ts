/**
 * Secrets as Docker and Kubernetes mount them: `X_FILE` names the file that
 * holds `X`. The value works where `X` would, is redacted like `X`, never
 * reaches loopd's environment (what children inherit), and every mistake
 * stops the start naming the variable and the path, never the content.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { loadConfig } from "../../src/config.js";
import { createRedactor } from "../../src/util/redact.js";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { runProgram } from "../e2e/run-program.js";

const folder = mkdtempSync(path.join(tmpdir(), "loopd-secrets-"));
function secretFile(name: string, text: string): string {
  const file = path.join(folder, name);
  writeFileSync(file, text);
  return file;
}

const ADMIN_TOKEN = "admin-token-from-a-file-0123456789";
const f = useLoopd({ env: { ADMIN_TOKEN_FILE: secretFile("admin_token", `${ADMIN_TOKEN}\n`) } });

test("ADMIN_TOKEN_FILE: the admin routes take the file's token (its line break dropped), and no other", async () => {
  const make = (token: string) =>
    f.loopd.app.inject({
      method: "POST",
      url: "/admin/keys",
      headers: { authorization: `Bearer ${token}` },
      payload: { tenant: "acme" },
    });
  expect((await make(ADMIN_TOKEN)).statusCode).toBe(201);
  expect((await make("some-other-token-0123456789")).statusCode).toBe(401);
});

describe("values from files", () => {
  test("each is the variable's value, trailing line breaks dropped, and is redacted like it", () => {
    const env = {
      OPENAI_API_KEY_FILE: secretFile("openai", "sk-from-file-abcdef123456\r\n"),
      ANTHROPIC_API_KEY_FILE: secretFile("anthropic", "sk-ant-from-file-abcdef"),
      DATABASE_URL_FILE: secretFile("database_url", "postgres://loopd:pa55-from-file@db.internal:5432/loopd\n"),
      WEBHOOK_SECRET_FILE: secretFile("webhook", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n"),
      METRICS_TOKEN_FILE: secretFile("metrics", "metrics-token-from-file-0123\n\n"),
      // Compose passes unset variables as empty ones: that is not "both set".
      OPENAI_API_KEY: "",
    };
    const config = loadConfig(env);
    expect(config.models.providers.openai.apiKey).toBe("sk-from-file-abcdef123456");
    expect(config.models.providers.anthropic.apiKey).toBe("sk-ant-from-file-abcdef");
    expect(config.models.defaultProvider).toBe("anthropic");
    expect(config.database.url).toBe("postgres://loopd:pa55-from-file@db.internal:5432/loopd");
    expect(config.webhooks.secret).toBe("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
    expect(config.auth.metricsToken).toBe("metrics-token-from-file-0123");
    const redact = createRedactor(config.secrets).text;
    const said = redact(
      "keys sk-from-file-abcdef123456 and sk-ant-from-file-abcdef, password pa55-from-file, tokens metrics-token-from-file-0123 whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    );
    expect(said).toBe("keys [redacted] and [redacted], password [redacted], tokens [redacted] [redacted]");
  });

  test("they stay out of the environment given, which children inherit, and ${X} in TOOLS_FILE does not see them", () => {
    const env: NodeJS.ProcessEnv = { ADMIN_TOKEN_FILE: secretFile("admin_token_2", ADMIN_TOKEN) };
    expect(loadConfig(env).auth.adminToken).toBe(ADMIN_TOKEN);
    expect(env).toEqual({ ADMIN_TOKEN_FILE: path.join(folder, "admin_token_2") });
    const tools = secretFile(
      "tools.json",
      JSON.stringify({ mcp: [{ name: "fs", command: "node", args: ["server.js"], env: { TOKEN: "${ADMIN_TOKEN}" } }] }),
    );
    expect(() => loadConfig({ ...env, TOOLS_FILE: tools })).toThrow("${ADMIN_TOKEN} is not set in the environment");
  });
});

describe("mistakes stop the start, naming the variable and the path, never the content", () => {
  test("X and X_FILE both set", () => {
    expect(() =>
      loadConfig({ ADMIN_TOKEN: ADMIN_TOKEN, ADMIN_TOKEN_FILE: secretFile("admin_token_3", ADMIN_TOKEN) }),
    ).toThrow("ADMIN_TOKEN and ADMIN_TOKEN_FILE are both set: set one of them");
  });

  test("a file that is missing, a folder or empty", () => {
    const missing = path.join(folder, "no-such-file");
    expect(() => loadConfig({ OPENAI_API_KEY_FILE: missing })).toThrow(
      `OPENAI_API_KEY_FILE ${missing} cannot be read (ENOENT)`,
    );
    const dir = path.join(folder, "a-folder");
    mkdirSync(dir);
    expect(() => loadConfig({ WEBHOOK_SECRET_FILE: dir })).toThrow(
      `WEBHOOK_SECRET_FILE ${dir} cannot be read (EISDIR)`,
    );
    const empty = secretFile("empty", "\n");
    expect(() => loadConfig({ DATABASE_URL_FILE: empty })).toThrow(`DATABASE_URL_FILE ${empty} is empty`);
  });

  test("a bad value says it came from the file, without showing it", () => {
    let message = "";
    try {
      loadConfig({ ADMIN_TOKEN_FILE: secretFile("short", "tooshort42\n") });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(
      /^invalid configuration: ADMIN_TOKEN: must be at least 16 characters .* \(read from ADMIN_TOKEN_FILE\)$/,
    );
    expect(message).not.toContain("tooshort42");
  });

  test("every program reads them (db:migrate as a process): the URL from the file is the one used, its password never printed", async () => {
    const url = secretFile("refused_url", "postgres://loopd:never-printed-pw@127.0.0.1:1/loopd\n");
    const refused = await runProgram("src/cli/migrate.ts", { env: { DATABASE_URL_FILE: url } });
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toMatch(
      /^db:migrate cannot run: cannot reach PostgreSQL at 127\.0\.0\.1:1: connection refused/,
    );
    expect(refused.output).not.toContain("never-printed-pw");
  }, 60_000);
});
