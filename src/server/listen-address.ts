import { createServer } from "node:net";
import { OperatorError } from "../errors.js";

/**
 * Whether loopd can listen on HOST:PORT, found out before the database is
 * opened and migrated (seconds, on the embedded one): a port in use is one
 * clear line at once, not a raw EADDRINUSE at the end. (Another process may
 * still take the port in between; `listen` then fails with the same words.)
 */
export async function checkListenAddress({ host, port }: { host: string; port: number }): Promise<void> {
  const probe = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once("error", reject);
      probe.listen({ host, port, exclusive: true }, resolve);
    });
  } catch (err) {
    throw explainListenError(err, { host, port });
  } finally {
    await new Promise<void>((resolve) => (probe.listening ? probe.close(() => resolve()) : resolve()));
  }
}

/** A failed `listen` in words that name the variable to change. */
export function explainListenError(err: unknown, { host, port }: { host: string; port: number }): Error {
  switch ((err as NodeJS.ErrnoException).code) {
    case "EADDRINUSE":
      return new OperatorError(
        `PORT ${port} is already in use on ${host} (another loopd, or another server): stop that process or set PORT to a free port`,
        { cause: err },
      );
    case "EACCES":
      return new OperatorError(
        `PORT ${port} needs privileges this user does not have on ${host}: set PORT to 1024 or above`,
        { cause: err },
      );
    case "EADDRNOTAVAIL":
      return new OperatorError(
        `HOST ${host} is not an address of this machine: set HOST to one of its addresses (127.0.0.1 for this machine only, 0.0.0.0 for every interface)`,
        { cause: err },
      );
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return new OperatorError(
        `HOST ${host} is not a known host name or address: set HOST to an address of this machine (127.0.0.1, 0.0.0.0)`,
        { cause: err },
      );
    default:
      return err instanceof Error ? err : new Error(String(err));
  }
}
