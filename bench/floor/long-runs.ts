import type { FakeLlm } from "../../test/support/fake-llm/server.js";
import type { FloorRequest } from "../lib/floor-loop.js";
import { startFloorSubject, startLoopdSubject, type LongRunSubject, type SubjectName } from "./long-run-subjects.js";
import { openLongRunBench } from "./long-run-bench.js";
import { toolStepsThenAnswer } from "./long-run-scenario.js";
import { measureWindow, type WindowFigures } from "../lib/measure-window.js";
import type { ServerMonitor } from "../lib/server-monitor.js";

export interface LongRunRow extends WindowFigures {
  subject: SubjectName;
  /** Tool steps per run (each run makes one model call more, to answer). */
  steps: number;
  runs: number;
  /** The size of the last model request: the whole history, the same for every subject if they do the same work. */
  lastRequestBytes: number;
}

/** Fewer steps than this per row are too few to read CPU ticks of 10 ms from: short runs are repeated. */
export const MIN_STEPS_PER_ROW = 300;

/**
 * The machine is shared: a row during which others kept more than this share
 * of the cores busy is measured again, up to `tries` times in all, and the
 * quietest attempt kept.
 */
export interface QuietRule {
  othersShare: number;
  tries: number;
}

/**
 * floor: Long runs against the floor: for each step count, the floor (see
 * floor-loop.ts), loopd and, given `baselineDir`, an older loopd each run
 * the same scenario in turn, each in its own process on its own fresh
 * database, measured by measureWindow.
 */
export async function measureLongRuns({
  serverUrl,
  stepCounts,
  baselineDir,
  logLevel,
  quiet = { othersShare: 0.1, tries: 3 },
  progress,
}: {
  /** A Postgres server; unset runs on PGlite. */
  serverUrl: string | undefined;
  stepCounts: number[];
  baselineDir: string | undefined;
  logLevel: string;
  quiet?: QuietRule;
  progress: (line: string) => void;
}): Promise<LongRunRow[]> {
  const bench = await openLongRunBench({ serverUrl, stepCounts, logLevel });
  const { llm, workspaceDir, monitor, env, subjects } = bench;
  try {
    const loopd = await startLoopdSubject({ name: "loopd", serverUrl, env });
    subjects.push(loopd);
    if (baselineDir)
      subjects.push(await startLoopdSubject({ name: "loopd before", checkout: baselineDir, serverUrl, env }));
    const request = await recordLoopdRequest(llm, loopd);
    subjects.unshift(await startFloorSubject({ serverUrl, llmUrl: llm.url, workspaceDir, request }));

    llm.respond = toolStepsThenAnswer(5);
    for (const subject of subjects) {
      await (
        await subject.prepare({ runs: 3, steps: 5 })
      )();
      await subject.database.settle();
    }

    const rows: LongRunRow[] = [];
    for (const steps of stepCounts) {
      const runs = Math.ceil(MIN_STEPS_PER_ROW / steps);
      const lastRequest = answerLongRuns(llm, steps);
      for (const subject of subjects) {
        const quietest = await measureQuietest({
          subject,
          monitor,
          runs,
          steps,
          quiet,
          progress: (attempt) =>
            progress(
              `${serverUrl ? "postgres" : "pglite"}: ${subject.name}, ${runs} run(s) of ${steps} tool steps (attempt ${attempt})`,
            ),
        });
        rows.push({ subject: subject.name, steps, runs, lastRequestBytes: lastRequest.bytes, ...quietest });
      }
    }
    return rows;
  } finally {
    await bench.close();
  }
}

/** A row measured up to `quiet.tries` times while others keep the machine busy; the quietest attempt. */
export async function measureQuietest({
  subject,
  monitor,
  runs,
  steps,
  quiet,
  progress,
}: {
  subject: LongRunSubject;
  monitor: ServerMonitor | null;
  runs: number;
  steps: number;
  quiet: QuietRule;
  progress: (attempt: number) => void;
}): Promise<WindowFigures> {
  let quietest: WindowFigures | null = null;
  for (
    let attempt = 1;
    attempt <= quiet.tries && !(quietest && quietest.othersCpuShare <= quiet.othersShare);
    attempt++
  ) {
    progress(attempt);
    const figures = await measureRow({ subject, monitor, runs, steps });
    if (!quietest || figures.othersCpuShare < quietest.othersCpuShare) quietest = figures;
  }
  return quietest!;
}

async function measureRow({
  subject,
  monitor,
  runs,
  steps,
}: {
  subject: LongRunSubject;
  monitor: ServerMonitor | null;
  runs: number;
  steps: number;
}): Promise<WindowFigures> {
  const work = await subject.prepare({ runs, steps });
  const { figures, result: calls } = await measureWindow({
    pid: subject.pid,
    monitor,
    databaseName: subject.database.name,
    wire: subject.wire,
    work,
  });
  if (calls !== runs * (steps + 1))
    throw new Error(`${subject.name} made ${calls} model calls, not ${runs * (steps + 1)}`);
  return figures;
}

/** One short loopd run, to give the floor loopd's very request (model, tools, limits, system prompt). */
export async function recordLoopdRequest(llm: FakeLlm, loopd: LongRunSubject): Promise<FloorRequest> {
  llm.requests.length = 0;
  llm.respond = toolStepsThenAnswer(1);
  await (
    await loopd.prepare({ runs: 1, steps: 1 })
  )();
  const { messages, ...params } = llm.requests[0]!.body as FloorRequest["params"] & {
    messages: Array<{ role: string }>;
  };
  llm.requests.length = 0;
  return { params, system: messages.filter((m) => m.role === "system") as FloorRequest["system"] };
}

/**
 * Answers as toolStepsThenAnswer(steps), keeping only the size of the last
 * request: recorded whole, the histories of a 1000-step run would take
 * gigabytes.
 */
export function answerLongRuns(llm: FakeLlm, steps: number): { bytes: number } {
  const last = { bytes: 0 };
  const respond = toolStepsThenAnswer(steps);
  llm.respond = (req) => {
    last.bytes = Number(req.headers["content-length"] ?? 0);
    llm.requests.length = 0;
    return respond(req);
  };
  return last;
}
