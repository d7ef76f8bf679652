import { writeFileSync } from "node:fs";
import path from "node:path";
import type { FakeLlm } from "../../test/support/fake-llm/server.js";
import { isEvent, readSse } from "../../test/support/helpers/sse-client.js";

/** The file each tool step reads: 20 lines of 99 characters, 2,000 bytes. */
export const TOOL_FILE = "two-kb.txt";

/** Writes TOOL_FILE into the workspace folder loopd is given. */
export function writeToolFile(workspaceDir: string): void {
  const line = (n: number) => `${String(n).padStart(2, "0")} ${"lorem ipsum ".repeat(8)}`.padEnd(99, ".");
  writeFileSync(path.join(workspaceDir, TOOL_FILE), Array.from({ length: 20 }, (_, n) => `${line(n)}\n`).join(""));
}

/**
 * The sizing table's run shape: `steps` tool steps, each `read_file` of
 * TOOL_FILE (a result of about 2 KB: its lines, numbered), then a text
 * answer. Counts the model calls it answers.
 */
export function answerToolSteps(llm: FakeLlm, steps: number): { calls(): number } {
  let calls = 0;
  llm.respond = (req) => {
    calls++;
    // The fake keeps every request; these rounds make tens of thousands.
    llm.requests.length = 0;
    const messages = req.body.messages as Array<{ role: string }>;
    const done = messages.filter((m) => m.role === "tool").length;
    return done < steps ? { toolCalls: [{ name: "read_file", input: { path: TOOL_FILE } }] } : { text: "done" };
  };
  return { calls: () => calls };
}

export interface StreamedRun {
  conversationId: string;
  runId: string | null;
  /** When the request was sent (performance.now()). */
  startedAt: number;
  /** From the request to its first and its last SSE event (ms). */
  ttfe: number | null;
  ttle: number | null;
  /** The last event's name (`run.completed` when it went well), the status of a refused request, or the error that cut the stream. */
  end: string;
  /** The stream ended by the server (not cut). */
  whole: boolean;
}

/** One streaming run (`stream: true`) on `conversationId`, read to its end or until the connection breaks. */
export async function streamedRun({
  url,
  conversationId,
  maxSteps,
}: {
  url: string;
  conversationId: string;
  maxSteps: number;
}): Promise<StreamedRun> {
  const startedAt = performance.now();
  const run: StreamedRun = {
    conversationId,
    runId: null,
    startedAt,
    ttfe: null,
    ttle: null,
    end: "none",
    whole: false,
  };
  try {
    const res = await fetch(`${url}/conversations/${conversationId}/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ content: "Go.", stream: true, max_steps: maxSteps }),
    });
    if (res.status !== 200) {
      const code = ((await res.json().catch(() => null)) as { error?: { code?: string } } | null)?.error?.code;
      return { ...run, end: code ? `${res.status} ${code}` : String(res.status), whole: true };
    }
    for await (const item of readSse(res)) {
      if (!isEvent(item)) continue;
      run.ttle = performance.now() - startedAt;
      run.ttfe ??= run.ttle;
      if (item.event === "run.created") run.runId = (item.data as { run: { id: string } }).run.id;
      run.end = item.event;
    }
    return { ...run, whole: true };
  } catch (error) {
    const cause = (error as { cause?: { code?: unknown } }).cause;
    return { ...run, end: typeof cause?.code === "string" ? cause.code : String(error) };
  }
}

/** Creates `count` conversations through `url` (untimed, before a window). */
export async function createConversations(url: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await fetch(`${url}/conversations`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    if (res.status !== 201) throw new Error(`create conversation: ${res.status} ${await res.text()}`);
    ids.push(((await res.json()) as { id: string }).id);
  }
  return ids;
}
