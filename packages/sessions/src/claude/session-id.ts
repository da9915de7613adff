import { describeValue, StowageError } from "@stowage/core";

/** A session id as Claude Code writes it: a UUID (8-4-4-4-12 hex digits). */
export const SESSION_ID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isSessionId(value: unknown): value is string {
  return typeof value === "string" && SESSION_ID_PATTERN.test(value);
}

/**
 * Throws INVALID_INPUT unless `value` is a UUID. Every path built from a session id goes through
 * this first, so `../x`, `a/b` or NUL never reach the file system.
 */
export function assertSessionId(value: unknown, what = "session id"): asserts value is string {
  if (!isSessionId(value)) {
    throw new StowageError(
      "INVALID_INPUT",
      `${what} must be a UUID such as "0f6c3a52-1b7e-4c1a-9d55-3c2b8f7e9a10", got ${describeValue(value)}`,
    );
  }
}
