import { execFileSync, spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { matchOutput } from "./match-output.js";
import { readWalkthrough, restOfWalkthrough, type Step } from "./read-walkthrough.js";

/**
 * `npm run readme`: runs the walkthrough (docs/walkthrough.md, then the pages
 * its last section lists, in that order) top to bottom, as a new user would,
 * and checks that every command prints what the page shows after it (see
 * `matchOutput` for what "the same" allows). One bash, with
 * job control as in a terminal, in a fresh copy of the repository (its
 * tracked files and the new ones git does not ignore; node_modules linked,
 * not installed again); the ports the pages name (3000 for loopd, 4010
 * for the fake LLM) are swapped for free ones. Every step runs; each
 * difference is printed, both sides, and makes the exit status 1. `--keep`
 * leaves the copy for a look.
 */
const repo = fileURLToPath(new URL("../..", import.meta.url));
const { values } = parseArgs({
  options: { keep: { type: "boolean", default: false }, "step-timeout-s": { type: "string", default: "180" } },
});
const stepTimeoutMs = Number(values["step-timeout-s"]) * 1000;

const walkthrough = "docs/walkthrough.md";
const pages = [
  walkthrough,
  ...restOfWalkthrough(readFileSync(path.join(repo, walkthrough), "utf8")).map((page) =>
    path.posix.join(path.posix.dirname(walkthrough), page),
  ),
];
const steps: (Step & { file: string })[] = pages.flatMap((file) =>
  readWalkthrough(readFileSync(path.join(repo, file), "utf8")).map((step) => ({ ...step, file })),
);
const copy = copyOfRepository();
const [loopdPort, llmPort] = [await freePort(), await freePort()];
const ports = (text: string) =>
  text
    .replace(/(127\.0\.0\.1|localhost):3000\b/g, `127.0.0.1:${loopdPort}`)
    .replace(/127\.0\.0\.1:4010\b/g, `127.0.0.1:${llmPort}`)
    .replace(/\bPORT=4010\b/g, `PORT=${llmPort}`);

const shell = spawn("bash", ["--norc", "--noprofile"], {
  cwd: copy,
  env: {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "",
    LANG: "C.UTF-8",
    TERM: "dumb",
    PORT: String(loopdPort),
  },
  stdio: ["pipe", "pipe", "inherit"],
});
const lines = createInterface({ input: shell.stdout })[Symbol.asyncIterator]();
shell.stdin.write("set -m\nexec 2>&1\n");

let failed = 0;
try {
  for (const [i, step] of steps.entries()) {
    const { printed, status } = await run(step, i);
    // A step with no output shown is checked by its exit status; one with output by what it printed (some commands, e.g. curl --max-time, end non-zero on purpose).
    const ok = step.expected
      ? matchOutput({ expected: ports(step.expected.text), actual: printed, lang: step.expected.lang })
      : status === 0;
    console.log(`${ok ? "ok  " : "DIFF"} ${step.file}:${step.line}  ${step.heading}`);
    if (!ok) {
      failed++;
      const shown = step.expected
        ? `the page shows (\`\`\`${step.expected.lang}):\n${ports(step.expected.text)}`
        : "the page shows no output: the step must end with status 0";
      console.log(`--- ${shown}\n--- the commands printed (status ${status}):\n${printed}\n---`);
    }
  }
} finally {
  // Each job is a process group of its own (set -m): the whole group goes, not only its leader (tsx leaves a node behind it).
  shell.stdin.end("for pid in $(jobs -p); do kill -- -$pid; done 2>/dev/null; wait\n");
  await new Promise((resolve) => shell.once("exit", resolve));
  if (values.keep) console.log(`the copy is kept in ${copy}`);
  else rmSync(path.dirname(copy), { recursive: true, force: true });
}
console.log(
  failed
    ? `the walkthrough differs from what it shows in ${failed} of ${steps.length} steps (${pages.length} pages)`
    : `the walkthrough printed what it shows: ${steps.length} steps (${pages.length} pages)`,
);
process.exitCode = failed ? 1 : 0;

/** Runs one step's commands in the shell; resolves with what they printed and the last command's exit status. */
async function run(step: Step & { file: string }, index: number): Promise<{ printed: string; status: number }> {
  const file = path.join(copy, ".walkthrough", `step-${index + 1}.sh`);
  writeFileSync(file, `${ports(step.commands)}\n`);
  const done = `__walkthrough_step_${index + 1}_done__`;
  // The marker on a line of its own, whatever the commands left unfinished on theirs.
  shell.stdin.write(`source ${file}\nprintf '\\n%s %s\\n' ${done} $?\n`);
  let out = "";
  const timer = setTimeout(() => shell.kill("SIGKILL"), stepTimeoutMs);
  try {
    for (;;) {
      const next = await lines.next();
      if (next.done)
        throw new Error(
          `${step.file}:${step.line}: the shell ended (or the step ran past ${stepTimeoutMs / 1000} s); it printed:\n${out}`,
        );
      const end = next.value.match(new RegExp(`^${done} (\\d+)$`));
      if (end) return { printed: out.replace(/\n$/, ""), status: Number(end[1]) };
      out += `${next.value}\n`;
    }
  } finally {
    clearTimeout(timer);
  }
}

function copyOfRepository(): string {
  const root = mkdtempSync(path.join(tmpdir(), "loopd-readme-"));
  const copy = path.join(root, "loopd");
  const files = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
    cwd: repo,
    encoding: "utf8",
  })
    .split("\0")
    .filter(Boolean);
  for (const file of files) {
    mkdirSync(path.dirname(path.join(copy, file)), { recursive: true });
    // A file deleted but not yet committed is listed too.
    try {
      cpSync(path.join(repo, file), path.join(copy, file));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
  }
  symlinkSync(path.join(repo, "node_modules"), path.join(copy, "node_modules"));
  mkdirSync(path.join(copy, ".walkthrough"));
  return copy;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
