import { StowageError } from "@stowage/core";

// A wrong command line exits 2, as commander's own refusals do; a refused or failed operation
// exits 1. The CLI's checks of its command line (option values, --user/--org, options that
// exclude each other) throw StowageErrors like every other failure, so that `--json` prints the
// wire format and tests assert on `code`; this set is how `main` tells them apart.
const usageErrors = new WeakSet<object>();

/** Marks `err` as a wrong command line (exit status 2) and returns it. */
export function markUsageError<E extends object>(err: E): E {
  usageErrors.add(err);
  return err;
}

/** A wrong command line: INVALID_INPUT, exit status 2. */
export function usageError(message: string): StowageError {
  return markUsageError(new StowageError("INVALID_INPUT", message));
}

/** Whether `err` is a wrong command line (see {@link usageError}). */
export function isUsageError(err: unknown): boolean {
  return typeof err === "object" && err !== null && usageErrors.has(err);
}
