import { type OperationOptions, StowageError } from "@stowage/core";
import type {
  CreateSessionBlobInput,
  ListSessionBlobsOptions,
  SessionBlobRecord,
  SessionBlobRepository,
  SessionBlobSummaryPage,
} from "@stowage/sessions";
import type { RegisteredSessions } from "./shared/registered-sessions.js";

/** The session blobs one principal stored: the repository with the principal's owner filled in. */
export interface TenantSessionBlobs {
  create(
    input: Omit<CreateSessionBlobInput, "owner">,
    options?: OperationOptions,
  ): Promise<SessionBlobRecord>;
  getLatestForRequest(requestId: string, options?: OperationOptions): Promise<SessionBlobRecord | null>;
  getBySessionId(sessionId: string, options?: OperationOptions): Promise<SessionBlobRecord | null>;
  /**
   * Deletes the principal's sessions of a request; NOT_FOUND when it stored none (another's look
   * the same), or when its latest is of a session in the trash.
   */
  deleteForRequest(requestId: string, options?: OperationOptions): Promise<number>;
  /**
   * Moves the principal's live sessions of a request to the trash of stored sessions (they expire
   * now, `trashedBy` says who); NOT_FOUND as {@link deleteForRequest}.
   */
  expireForRequest(requestId: string, trashedBy: string, options?: OperationOptions): Promise<number>;
  /**
   * Deletes the principal's records of one session id, whatever request they were stored for; 0
   * when there are none (deleting a session deletes whatever it has, and sending it again finds nothing).
   */
  deleteForSession(sessionId: string, options?: OperationOptions): Promise<number>;
  /** Sets when the principal's live records of a session id expire (after now); how many changed. */
  extendExpiry(sessionId: string, expiresAt: Date, options?: OperationOptions): Promise<number>;
  /**
   * One page of the principal's live stored sessions, without their blobs, in the order they were
   * stored; those of a session in the trash left out (a page may then hold fewer).
   */
  list(options?: ListSessionBlobsOptions): Promise<SessionBlobSummaryPage>;
  /** Bytes the session's latest stored record keeps (what its trash entry lists). */
  bytes(sessionId: string, options?: OperationOptions): Promise<number>;
}

const noStoredSession = (requestId: string) =>
  new StowageError("NOT_FOUND", `no stored session for request ${requestId}`);

/**
 * `repository` as `owner` sees it: no route passes an owner, so none can pass the wrong one. A
 * record of a session in the trash is not there for any read (null, left out of a listing), and
 * nothing is stored for it (CONFLICT `SESSION_IN_TRASH`) until it is restored.
 */
export function bindSessionBlobs(
  repository: SessionBlobRepository,
  owner: string,
  registered: RegisteredSessions,
): TenantSessionBlobs {
  const inTrash = async (sessionId: string, options: OperationOptions = {}) =>
    (await registered.state(sessionId, options)) === "trashed";
  const visible = async (record: SessionBlobRecord | null, options?: OperationOptions) =>
    record === null || (await inTrash(record.sessionId, options)) ? null : record;
  // A request whose latest stored session is in the trash is not there, for a delete as for a read.
  const assertRequestNotInTrash = async (requestId: string, options?: OperationOptions) => {
    const latest = await repository.getLatestForRequest(owner, requestId, options);
    if (latest !== null && (await inTrash(latest.sessionId, options))) throw noStoredSession(requestId);
  };
  return {
    async create(input, options) {
      if (typeof input?.sessionId === "string" && (await inTrash(input.sessionId, options))) {
        throw new StowageError("CONFLICT", `session ${input.sessionId} is in the trash; restore it first`, {
          reason: "SESSION_IN_TRASH",
        });
      }
      return repository.create({ ...input, owner }, options);
    },
    getLatestForRequest: async (requestId, options) =>
      visible(await repository.getLatestForRequest(owner, requestId, options), options),
    getBySessionId: async (sessionId, options) =>
      visible(await repository.getBySessionId(owner, sessionId, options), options),
    async list(options) {
      const page = await repository.listByOwner(owner, options);
      const kept = [];
      for (const record of page.sessions) if (!(await inTrash(record.sessionId, options))) kept.push(record);
      return { ...page, sessions: kept };
    },
    /** Bytes the session's latest stored record keeps. */
    bytes: async (sessionId, options) =>
      (await repository.getBySessionId(owner, sessionId, options))?.storedBytes ?? 0,
    extendExpiry: async (sessionId, expiresAt, options) =>
      (await inTrash(sessionId, options)) ? 0 : repository.extendExpiry(owner, sessionId, expiresAt, options),
    async deleteForRequest(requestId, options) {
      await assertRequestNotInTrash(requestId, options);
      const deleted = await repository.deleteForRequest(owner, requestId, options);
      if (deleted === 0) throw noStoredSession(requestId);
      return deleted;
    },
    async expireForRequest(requestId, trashedBy, options) {
      await assertRequestNotInTrash(requestId, options);
      const changed = await repository.expireForRequest(owner, requestId, trashedBy, options);
      if (changed === 0) throw noStoredSession(requestId);
      return changed;
    },
    deleteForSession: (sessionId, options) => repository.deleteForSession(owner, sessionId, options),
  };
}
