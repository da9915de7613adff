import { throwIfAborted } from "@stowage/core";
import { fromDatabaseError } from "./database-errors.js";

/**
 * Runs one database operation: fails with ABORTED before starting when `signal` has fired, and
 * maps whatever the driver throws to a StowageError. A statement already sent is not cancelled;
 * multi-statement operations check the signal again between statements (and before commit).
 */
export async function runDatabase<T>(
  context: string,
  signal: AbortSignal | undefined,
  action: () => Promise<T>,
): Promise<T> {
  throwIfAborted(signal, context);
  try {
    return await action();
  } catch (err) {
    throw fromDatabaseError(err, context);
  }
}
