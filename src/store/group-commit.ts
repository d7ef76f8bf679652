/**
 * Group commit: statements of one kind, at most `slots` of them at the
 * database at once. An item that finds a slot free goes at once, alone
 * (`one`); those that come while every slot is taken wait, then go
 * together, up to `maxBatch`, in one statement (`many`) as soon as one is
 * free. Under load that is one round trip (and one commit) for many items;
 * at rest, nothing changes. `many` answers each item in order: its result,
 * or the error that failed it alone; a statement that fails fails them all.
 */
export function grouped<I, O>({
  slots,
  maxBatch = 64,
  one,
  many,
}: {
  slots: number;
  maxBatch?: number;
  one: (item: I) => Promise<O>;
  many: (items: I[]) => Promise<Array<O | Error>>;
}): Grouped<I, O> {
  const waiting: Array<{ item: I; since: number; resolve: (result: O) => void; reject: (err: unknown) => void }> = [];
  let busy = 0;
  const send = async (batch: typeof waiting): Promise<void> => {
    try {
      if (batch.length === 1) return batch[0]!.resolve(await one(batch[0]!.item));
      const results = await many(batch.map((w) => w.item));
      batch.forEach((w, i) => {
        const result = results[i] as O | Error;
        if (result instanceof Error) w.reject(result);
        else w.resolve(result);
      });
    } catch (err) {
      for (const w of batch) w.reject(err);
    }
  };
  const pump = () => {
    while (busy < slots && waiting.length > 0) {
      busy++;
      void send(waiting.splice(0, maxBatch)).then(() => {
        busy--;
        pump();
      });
    }
  };
  const submit = (item: I) =>
    new Promise<O>((resolve, reject) => {
      waiting.push({ item, since: performance.now(), resolve, reject });
      pump();
    });
  // The first waiting has waited longest (they go in the order they came).
  return Object.assign(submit, {
    longestWaitMs: () => (waiting.length === 0 ? 0 : performance.now() - waiting[0]!.since),
  });
}

/** Sends one item (see `grouped`); `longestWaitMs`: how long the item waiting longest for a slot has waited so far (ms), 0 when none waits. */
export type Grouped<I, O> = ((item: I) => Promise<O>) & { longestWaitMs(): number };

/** An item a grouped statement undid alone: the database's error, with its SQLSTATE as `code` and the constraint it broke, as pg's errors have them. */
export class ItemFailed extends Error {
  override readonly name = "ItemFailed";
  constructor(
    readonly code: string,
    message: string,
    readonly constraint?: string,
  ) {
    super(message);
  }
}

/** What a function that runs each item in a block of its own answers for one that failed. */
export interface ItemFailure {
  code: string;
  message: string;
  constraint?: string | null;
}

export const itemFailed = (f: ItemFailure): ItemFailed => new ItemFailed(f.code, f.message, f.constraint ?? undefined);

/**
 * A grouped statement's argument: the JSON array of the items that can be
 * written as JSON, each written on its own, so that one that cannot (a
 * value nested past JSON.stringify's depth, a BigInt) fails alone and is
 * left out; `answer` puts the statement's answers, in the order sent, back
 * at their items' places, beside those failures.
 */
export function jsonArgument<I, O>(
  items: I[],
  toJson: (item: I) => string,
): { json: string; answer: (results: Array<O | Error>) => Array<O | Error> } {
  const parts: string[] = [];
  const sent: number[] = [];
  const answers = new Array<O | Error>(items.length);
  items.forEach((item, i) => {
    try {
      parts.push(toJson(item));
      sent.push(i);
    } catch (err) {
      answers[i] = err instanceof Error ? err : new Error(String(err));
    }
  });
  return {
    json: `[${parts.join(",")}]`,
    answer: (results) => {
      sent.forEach((i, k) => (answers[i] = results[k]!));
      return answers;
    },
  };
}

/** A jsonb column as pg or PGlite gives it: parsed, or its text. */
export const jsonOf = <T>(value: unknown): T => (typeof value === "string" ? JSON.parse(value) : value) as T;
