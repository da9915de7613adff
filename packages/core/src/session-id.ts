import { describeValue } from "./describe-value.js";
import { StowageError } from "./errors.js";
import { MAX_SAFE_ID_LENGTH, safeIdProblem } from "./safe-id.js";

/** Longest session id accepted (the safe-id cap). */
const MAX_SESSION_ID_LENGTH = MAX_SAFE_ID_LENGTH;

// A session file is `<startedAt>_<sessionId>.jsonl` beside its artifacts directory
// `<startedAt>_<sessionId>`: an id ending in `.jsonl` would own as its directory the session file
// of the id without it (compared without case, as macOS does).
const ENDS_LIKE_A_SESSION_FILE = /\.jsonl$/i;

/**
 * Why `value` is not a session id, or undefined when it is one. Ids are opaque (UUIDs for Claude
 * Code and Codex, `ses_…` for OpenCode, anything a host picks), but each becomes a file or
 * directory name: a safe id (`safeIdProblem`: letters, digits and `._:@-`, starting with a letter
 * or digit, at most {@link MAX_SESSION_ID_LENGTH} characters) that does not end in `.jsonl`. The
 * one session-id rule: every package and app checks ids with it, so an id one accepts another
 * never refuses.
 */
export function sessionIdProblem(value: unknown): string | undefined {
  const problem = safeIdProblem(value, MAX_SESSION_ID_LENGTH);
  if (problem) return problem;
  return ENDS_LIKE_A_SESSION_FILE.test(value as string) ? "must not end in .jsonl" : undefined;
}

export function isSessionId(value: unknown): value is string {
  return sessionIdProblem(value) === undefined;
}

/** Throws INVALID_INPUT (reason `INVALID_SESSION_ID`) unless `value` is a session id; `what` names it. */
export function assertSessionId(value: unknown, what = "sessionId"): asserts value is string {
  const problem = sessionIdProblem(value);
  if (problem) {
    const tooLong = typeof value === "string" && value.length > MAX_SESSION_ID_LENGTH;
    throw new StowageError("INVALID_INPUT", `${what} ${problem}, got ${describeValue(value)}`, {
      reason: "INVALID_SESSION_ID",
      ...(tooLong ? { details: { limit: MAX_SESSION_ID_LENGTH } } : {}),
    });
  }
}
