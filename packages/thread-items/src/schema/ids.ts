import { assertSafePathSegment, describeValue, StowageError } from "@stowage/core";

/** Longest `jobId` or thread `alias` accepted, in characters (both become directory names). */
export const MAX_PATH_ID_LENGTH = 128;
/** Longest thread item `id` accepted, in characters. */
export const MAX_ITEM_ID_LENGTH = 200;

// Letters, digits, ".", "_" and "-", starting with a letter or digit: no traversal (".."), no hidden
// names, no percent-encoding ("%2e%2e"), no spaces or separators on any file system.
const PATH_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
/**
 * Characters of a thread item id. Ids may also hold ":" (`<uuid>:<block>`): they are matched inside
 * log lines, never used as paths.
 */
export const ITEM_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;

/** Why `value` is not an accepted item id, or undefined when it is. */
export function itemIdProblem(value: unknown): string | undefined {
  if (typeof value !== "string") return "must be a string";
  if (value.length === 0 || value.length > MAX_ITEM_ID_LENGTH || !ITEM_ID_PATTERN.test(value)) {
    return `must be 1 to ${MAX_ITEM_ID_LENGTH} characters of letters, digits, ".", "_", ":" and "-", starting with a letter or digit`;
  }
  return undefined;
}

/** Throws INVALID_INPUT unless `value` is an accepted thread item id. */
export function assertItemId(value: unknown, what = "thread item id"): asserts value is string {
  const problem = itemIdProblem(value);
  if (problem) throw new StowageError("INVALID_INPUT", `${what} ${problem}, got ${describeValue(value)}`);
}

/**
 * Throws INVALID_INPUT unless `value` is safe as one directory name of the thread log path
 * (`jobId`, `alias`): core's segment rules, then this package's stricter character set.
 */
export function assertPathId(value: unknown, what: string): asserts value is string {
  assertSafePathSegment(value, what);
  if (value.length > MAX_PATH_ID_LENGTH || !PATH_ID_PATTERN.test(value)) {
    throw new StowageError(
      "INVALID_INPUT",
      `${what} must be 1 to ${MAX_PATH_ID_LENGTH} characters of letters, digits, ".", "_" and "-", starting with a letter or digit, got ${describeValue(value)}`,
    );
  }
}
