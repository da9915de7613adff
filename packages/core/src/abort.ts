import { StowageError } from "./errors.js";

/** Throws ABORTED when `signal` has fired; `context` says which operation was cut short. */
export function throwIfAborted(signal: AbortSignal | undefined, context: string): void {
  if (signal?.aborted) throw abortedError(signal, context);
}

export function abortedError(signal: AbortSignal | undefined, context: string): StowageError {
  return new StowageError("ABORTED", `${context}: aborted`, { cause: signal?.reason });
}
