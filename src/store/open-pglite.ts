import { PGlite } from "@electric-sql/pglite";
import { OperatorError } from "../errors.js";
import { isDatabaseFault, unopenedMessage } from "./embedded-folder.js";

/** PGlite on `folder` (see `embeddedFolderOf`: beside it, in `dataDir`, the lock file, which PGlite's initdb would not accept in its own folder); in memory without one. */
export async function openPglite(dataDir: string | undefined, folder: string | undefined): Promise<PGlite> {
  if (!dataDir || !folder) return PGlite.create({});
  try {
    return await PGlite.create({ dataDir: folder });
  } catch (err) {
    throw new OperatorError(unopenedMessage(dataDir, err), { cause: err });
  }
}

/** Every way drizzle, the migrator and `ping` reach PGlite; a transaction's own queries surface through `transaction`. */
export function reportFaults(client: PGlite, onFault: (err: Error) => void): void {
  let reported = false;
  const watch =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await call(...args);
      } catch (err) {
        if (!reported && isDatabaseFault(err)) {
          reported = true;
          onFault(err as Error);
        }
        throw err;
      }
    };
  client.query = watch(client.query.bind(client)) as PGlite["query"];
  client.exec = watch(client.exec.bind(client));
  client.transaction = watch(client.transaction.bind(client)) as PGlite["transaction"];
}
