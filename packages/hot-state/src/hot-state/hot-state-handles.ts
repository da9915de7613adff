import { describeValue, StowageError } from "@stowage/core";
import type { HotState } from "../schemas/hot-state-schema.js";
import { type BuildHotStateOptions, buildHotState, type HotStateBuild } from "./build-hot-state.js";

/** Roles that may read the hot state but never write it. */
export const READER_ROLES = ["executor", "planner", "system"] as const;
/** A role that reads the hot state but never writes it. */
export type ReaderRole = (typeof READER_ROLES)[number];

/** Read access to a session's hot state. It has no method that writes. */
export interface HotStateView {
  readonly role: ReaderRole;
  readonly sessionId: string;
  /** The latest build (deeply frozen), or `undefined` before the dispatcher's first write. */
  current(): HotStateBuild | undefined;
  /** 0 before the first write, then one more per write. */
  revision(): number;
}

/** The one handle that writes a session's hot state. */
export interface HotStateDispatcher {
  readonly role: "dispatcher";
  readonly sessionId: string;
  current(): HotStateBuild | undefined;
  revision(): number;
  /** Validates and fits `input` with {@link buildHotState}, then publishes it to every view. */
  write(input: unknown): HotStateBuild;
  /** Writes what `change` returns, given the current state (the fitted one, not the original input). */
  update(change: (current: Readonly<HotState> | undefined) => unknown): HotStateBuild;
}

/** What `createHotState` returns: the one writing handle and read-only views. */
export interface HotStateHandles {
  /** Hand this to the dispatcher only: holding it is what allows writing. */
  dispatcher: HotStateDispatcher;
  /** A read-only view for another role. */
  viewFor(role: ReaderRole): HotStateView;
}

/** Options of `createHotState`. */
export interface CreateHotStateOptions extends BuildHotStateOptions {
  /** The session this hot state belongs to; a write with another `session_id` is refused. */
  sessionId: string;
}

/**
 * Creates a session's hot state and the handles to it. Only the dispatcher may write hot state,
 * and that rule lives in the types and objects, not in a comment: writing needs the
 * `dispatcher` handle, and the views given to other roles have no write method at all (they are
 * frozen objects holding only readers, so a cast finds nothing to call either).
 */
export function createHotState(options: CreateHotStateOptions): HotStateHandles {
  const sessionId = options?.sessionId;
  if (typeof sessionId !== "string" || sessionId.length === 0) {
    throw new StowageError(
      "INVALID_INPUT",
      `createHotState: sessionId must be a non-empty string, got ${describeValue(sessionId)}`,
    );
  }
  const { sessionId: _sessionId, ...buildOptions } = options;
  let latest: HotStateBuild | undefined;
  let revision = 0;

  const current = () => latest;
  const readRevision = () => revision;

  function write(input: unknown): HotStateBuild {
    const build = buildHotState(input, buildOptions);
    if (build.state.session_id !== sessionId) {
      throw new StowageError(
        "INVALID_INPUT",
        `hot state session_id must be ${describeValue(sessionId)} (the session of this hot state), got ${describeValue(build.state.session_id)}`,
      );
    }
    latest = build;
    revision++;
    return build;
  }

  const dispatcher: HotStateDispatcher = Object.freeze({
    role: "dispatcher" as const,
    sessionId,
    current,
    revision: readRevision,
    write,
    update(change: (state: Readonly<HotState> | undefined) => unknown) {
      if (typeof change !== "function") {
        throw new StowageError("INVALID_INPUT", `update needs a function, got ${describeValue(change)}`);
      }
      return write(change(latest?.state));
    },
  });

  return Object.freeze({
    dispatcher,
    viewFor(role: ReaderRole): HotStateView {
      if (!READER_ROLES.includes(role)) {
        throw new StowageError(
          "INVALID_INPUT",
          `viewFor: role must be one of ${READER_ROLES.join(", ")} (the dispatcher writes through its own handle), got ${describeValue(role)}`,
        );
      }
      return Object.freeze({ role, sessionId, current, revision: readRevision });
    },
  });
}
