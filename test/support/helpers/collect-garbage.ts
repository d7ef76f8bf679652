import { fullCollection } from "../../../src/server/collect-garbage-when-idle.js";

// A full collection on demand, to see what is still held.
const collectGarbage = fullCollection();

/**
 * Whether `ref`'s target is gone after a full collection, a macrotask from
 * now: a WeakRef keeps its target for the rest of the job that made it.
 */
export async function collected(ref: WeakRef<object>): Promise<boolean> {
  await new Promise((resolve) => setImmediate(resolve));
  collectGarbage();
  return ref.deref() === undefined;
}
