import { describeValue, StowageError } from "@stowage/core";
import { isSessionId } from "../agents/session-id.js";

/** The session id of an SDK `system`/`init` message, or undefined for any other message. */
export function sessionIdFromMessage(message: unknown): string | undefined {
  if (typeof message !== "object" || message === null) return undefined;
  const { type, subtype, session_id: sessionId } = message as Record<string, unknown>;
  if (type !== "system" || subtype !== "init") return undefined;
  if (!isSessionId(sessionId)) {
    throw new StowageError(
      "INVALID_INPUT",
      `the SDK init message carries a session_id that is not a session id: ${describeValue(sessionId)}`,
    );
  }
  return sessionId;
}

export interface TrackedMessages<T> extends AsyncIterable<T> {
  /** The id from the first `system`/`init` message seen so far, if any. */
  readonly sessionId: string | undefined;
}

/**
 * Passes an SDK message stream through unchanged and records the session id of its first
 * `system`/`init` message (the id is never written to the transcript, so this is where it is
 * learnt). Later init messages do not change it.
 *
 * ```ts
 * const run = trackSessionId(query({ prompt }));
 * for await (const message of run) handle(message);
 * const sessionId = run.sessionId;
 * ```
 */
export function trackSessionId<T>(messages: AsyncIterable<T>): TrackedMessages<T> {
  let sessionId: string | undefined;
  return {
    get sessionId() {
      return sessionId;
    },
    async *[Symbol.asyncIterator]() {
      for await (const message of messages) {
        if (sessionId === undefined) sessionId = sessionIdFromMessage(message);
        yield message;
      }
    },
  };
}
