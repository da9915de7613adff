import { describeValue } from "./describe-value.js";
import { StowageError } from "./errors.js";

/** Longest id accepted unless a caller sets its own cap. */
export const MAX_SAFE_ID_LENGTH = 128;

/**
 * Letters, digits and `._:@-`, starting with a letter or digit: safe as one key segment or
 * directory name on every backend (no separator, no traversal, no hidden name, no
 * percent-encoding, no whitespace or control character), and readable in logs and URLs.
 */
const SAFE_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:@-]*$/;

/**
 * Why `value` is not a safe id (user, org, session, request, job, thread…), or undefined when it
 * is one. `maxLength` defaults to {@link MAX_SAFE_ID_LENGTH}.
 */
export function safeIdProblem(value: unknown, maxLength = MAX_SAFE_ID_LENGTH): string | undefined {
  if (typeof value !== "string") return "must be a string";
  if (value.length === 0 || value.length > maxLength) return `must be 1 to ${maxLength} characters`;
  if (!SAFE_ID_PATTERN.test(value)) {
    return `must be letters, digits, ".", "_", ":", "@" or "-", starting with a letter or digit`;
  }
  return undefined;
}

export function isSafeId(value: unknown, maxLength = MAX_SAFE_ID_LENGTH): value is string {
  return safeIdProblem(value, maxLength) === undefined;
}

/** Throws INVALID_INPUT unless `value` is a safe id; `what` names it in the message (`sessionId`). */
export function assertSafeId(
  value: unknown,
  what: string,
  maxLength = MAX_SAFE_ID_LENGTH,
): asserts value is string {
  const problem = safeIdProblem(value, maxLength);
  if (!problem) return;
  const tooLong = typeof value === "string" && value.length > maxLength;
  throw new StowageError("INVALID_INPUT", `${what} ${problem}, got ${describeValue(value)}`, {
    ...(tooLong ? { details: { limit: maxLength } } : {}),
  });
}
