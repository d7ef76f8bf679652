import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import { testDatabaseKind } from "../support/helpers/test-database.js";
import { startLoopdHoldingSecrets, SWEEP_COMMAND, type LoopdHoldingSecrets } from "./loopd-holding-secrets.js";

// A real process, compiling the sources at start: slow on a busy machine, so bounds, not measures, are generous.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 150_000 });

/*
 * TOOL_SANDBOX=user, what loopd uses as root where bubblewrap is missing:
 * the command runs as TOOL_RUN_AS_USER in a PID namespace of its own. An
 * approved run_command that reads every /proc/*\/environ and cmdline it can
 * finds none of loopd's secrets, runs as nobody, and sees only its own
 * processes. (CI runs as root, as the session does.)
 */

let workspaceDir: string;
let held: LoopdHoldingSecrets;

beforeAll(async () => {
  workspaceDir = mkdtempSync(path.join(tmpdir(), "loopd-user-sandbox-ws-"));
  // The workspace must be writable by the user tools run as (the README says so).
  chmodSync(workspaceDir, 0o777);
  held = await startLoopdHoldingSecrets({
    prefix: "loopd-user-sandbox-db-",
    env: { ENABLE_RUN_COMMAND: "true", TOOL_SANDBOX: "user", TOOL_RUN_AS_USER: "nobody", WORKSPACE_DIR: workspaceDir },
  });
});

afterAll(async () => {
  await held?.close();
  if (workspaceDir) rmSync(workspaceDir, { recursive: true, force: true });
});

describe.runIf(process.getuid?.() === 0)(
  `TOOL_SANDBOX=user: a command cannot read loopd's secrets through /proc (${testDatabaseKind})`,
  () => {
    test("an approved run_command runs as nobody, sees only its own processes, and finds none of loopd's secrets in any /proc/*/environ or cmdline", async () => {
      const { client, llm } = held;
      const conv = await client.createConversation({ tools: ["run_command"] });
      llm.script(
        {
          toolCalls: [
            {
              name: "run_command",
              input: { command: `id -u > who.txt; ls -d /proc/[0-9]* | wc -l > count.txt; ${SWEEP_COMMAND}` },
            },
          ],
        },
        { text: "Done." },
      );
      const paused = (await client.send(conv.id, "Look around.")).run;
      expect(paused).toMatchObject({ status: "requires_action" });
      const ended = await client.answer(conv.id, paused.id, {
        approvals: [{ tool_call_id: paused.required_action.tool_calls[0].tool_call_id, approve: true }],
      });
      expect(ended.run ?? ended).toMatchObject({ status: "completed" });
      expect(readFileSync(path.join(workspaceDir, "who.txt"), "utf8").trim()).toBe("65534");
      // Its own namespace: the shell, its loop and the few programs it ran, not the machine's hundreds.
      expect(Number(readFileSync(path.join(workspaceDir, "count.txt"), "utf8").trim())).toBeLessThan(10);
      const swept = readFileSync(path.join(workspaceDir, "sweep.txt"), "utf8");
      expect(swept).toMatch(/^PATH=/m);
      for (const secret of held.secrets()) expect(swept).not.toContain(secret);
    });
  },
);
