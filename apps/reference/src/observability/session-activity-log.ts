import type { SessionActivityEntry, SessionActivityKind } from "@stowage/tenancy/shared";
import type { RequestLogger } from "../http/request-log.js";

/** The message of each line: one per capture, one per restore (a read of `latest` on the server). */
export const SESSION_ACTIVITY_MESSAGE: Record<SessionActivityKind, string> = {
  capture: "session captured",
  restore: "session restored",
};

/** An agent version as a stored session may record it: short and plain, else not logged. */
const AGENT_VERSION = /^[A-Za-z0-9][A-Za-z0-9.+_-]{0,63}$/;

/**
 * The agent CLI version `source` records (a manifest's or a restored session's `agentVersion`),
 * when it records one that is short and plain; undefined otherwise (older archives record none).
 */
export function agentVersionOf(source: unknown): string | undefined {
  if (typeof source !== "object" || source === null) return undefined;
  const version = (source as { agentVersion?: unknown }).agentVersion;
  return typeof version === "string" && AGENT_VERSION.test(version) ? version : undefined;
}

/** What one capture or restore measured, and when it started (`performance.now()`). */
export interface SessionActivityMeasure {
  sessionId: string;
  requestId: string;
  agent: string;
  /** The manifest (or restored session) the version is read from. */
  versionSource?: unknown;
  fileCount: number;
  rawBytes: number;
  storedBytes: number;
  startedAt: number;
}

/** The entry of a capture or restore that just finished. */
export function sessionActivityEntry(measure: SessionActivityMeasure): SessionActivityEntry {
  const agentVersion = agentVersionOf(measure.versionSource);
  return {
    sessionId: measure.sessionId,
    requestId: measure.requestId,
    agent: measure.agent,
    ...(agentVersion === undefined ? {} : { agentVersion }),
    fileCount: measure.fileCount,
    rawBytes: measure.rawBytes,
    storedBytes: measure.storedBytes,
    durationMs: Math.round(performance.now() - measure.startedAt),
    at: new Date().toISOString(),
  };
}

/**
 * One structured line for a capture or restore, the same fields in the CLI and the server: ids,
 * agent and version, file count, sizes, duration; never the session's content or a key. The line's
 * own time is pino's `time`, so the entry's `at` is left out; `more` adds the server's
 * `httpRequestId` (`requestId` is the Stowage request the session is stored for).
 */
export function logSessionActivity(
  log: RequestLogger,
  kind: SessionActivityKind,
  entry: SessionActivityEntry,
  more: Record<string, unknown> = {},
): void {
  const { at: _at, ...fields } = entry;
  log.info({ ...more, ...fields }, SESSION_ACTIVITY_MESSAGE[kind]);
}
