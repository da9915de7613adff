import { describeValue, isSafeId, isSessionId, pathSegmentProblem, StowageError } from "@stowage/core";

/** Extension of a session file; its artifacts directory is the same path without it. */
export const SESSION_FILE_EXTENSION = ".jsonl";

/** The two parts of a session file name, `<startedAt>_<sessionId>.jsonl`. */
export interface SessionFileName {
  /** The timestamp part: a safe id without `_` (`2026-01-01T10-00-00-000Z`). */
  startedAt: string;
  sessionId: string;
}

/** The timestamp part of a new session's file name: ISO 8601 with `:` and `.` as `-`, so it sorts by time. */
export function sessionTimestamp(date: Date): string {
  if (!(date instanceof Date) || Number.isNaN(date.getTime())) {
    throw new StowageError("INVALID_INPUT", `startedAt must be a valid Date, got ${describeValue(date)}`);
  }
  return date.toISOString().replace(/[:.]/g, "-");
}

/** `<startedAt>_<sessionId>.jsonl`; both parts must already be checked. */
export function formatSessionFileName({ startedAt, sessionId }: SessionFileName): string {
  return `${startedAt}_${sessionId}${SESSION_FILE_EXTENSION}`;
}

/**
 * Parses `<startedAt>_<sessionId>.jsonl` exactly (split at the first `_`; the timestamp a safe id,
 * the session id one too, the whole a valid file name); undefined for any other name.
 */
export function parseSessionFileName(name: string): SessionFileName | undefined {
  if (!name.endsWith(SESSION_FILE_EXTENSION) || pathSegmentProblem(name) !== undefined) return undefined;
  const stem = name.slice(0, -SESSION_FILE_EXTENSION.length);
  const separator = stem.indexOf("_");
  if (separator === -1) return undefined;
  const startedAt = stem.slice(0, separator);
  const sessionId = stem.slice(separator + 1);
  if (!isSafeId(startedAt) || !isSessionId(sessionId)) return undefined;
  return { startedAt, sessionId };
}
