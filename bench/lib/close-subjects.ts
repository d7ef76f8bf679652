import { rmSync } from "node:fs";
import type { FakeLlm } from "../../test/support/fake-llm/server.js";
import type { BenchDatabase } from "./bench-database.js";
import type { LoopdProcess } from "./start-loopd-process.js";

/** The end of a section that measured loopd processes side by side: each stopped, the fake LLM closed, their databases dropped, the scratch folder removed. */
export async function closeSubjects({
  llm,
  processes,
  databases,
  dir,
}: {
  llm: FakeLlm;
  processes: LoopdProcess[];
  databases: BenchDatabase[];
  dir: string;
}): Promise<void> {
  llm.respond = null;
  await Promise.all(processes.map((p) => p.stop()));
  await llm.close();
  await Promise.all(databases.map((d) => d.drop()));
  rmSync(dir, { recursive: true, force: true });
}
