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
  const send1 = (item: I) =>
    new Promise<O>((resolve, reject) => {
      waiting.push({ item, since: performance.now(), resolve, reject });
      pump();
    });
  // The first waiting has waited longest (they go in the order they came).
  return Object.assign(send1, { longestWaitMs: () => (waiting.length === 0 ? 0 : performance.now() - waiting[0]!.since) });
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

/** The items' indexes in the order `key` sorts them (byte order), as a batch takes their locks. */
export const orderBy = <T>(items: T[], key: (item: T) => string): number[] => items.map((_, i) => i).sort((a, b) => (key(items[a]!) < key(items[b]!) ? -1 : 1));

/** A jsonb column as pg or PGlite gives it: parsed, or its text. */
export const jsonOf = <T>(value: unknown): T => (typeof value === "string" ? JSON.parse(value) : value) as T;
