import type { Logger } from "../logger.js";

/** One warning a {@link recordingLogger} was given. */
export interface RecordedWarning {
  message: string;
  /** The details object, when the warning came with one. */
  details: Record<string, unknown> | undefined;
}

/**
 * A `Logger` that keeps every warning, for tests that assert what was (or was not) logged. Pass
 * `into` to record into an array the test already holds.
 */
export function recordingLogger(into: RecordedWarning[] = []): {
  logger: Logger;
  warnings: RecordedWarning[];
} {
  function warn(details: Record<string, unknown>, message: string): void;
  function warn(message: string): void;
  function warn(first: Record<string, unknown> | string, message?: string): void {
    if (typeof first === "string") into.push({ message: first, details: undefined });
    else into.push({ message: message ?? "", details: first });
  }
  return { logger: { warn }, warnings: into };
}
