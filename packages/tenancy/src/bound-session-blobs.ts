import { type OperationOptions, StowageError } from "@stowage/core";
import type {
  CreateSessionBlobInput,
  ListSessionBlobsOptions,
  SessionBlobRecord,
  SessionBlobRepository,
  SessionBlobSummaryPage,
} from "@stowage/sessions";

/** The session blobs one principal stored: the repository with the principal's owner filled in. */
export interface TenantSessionBlobs {
  create(
    input: Omit<CreateSessionBlobInput, "owner">,
    options?: OperationOptions,
  ): Promise<SessionBlobRecord>;
  getLatestForRequest(requestId: string, options?: OperationOptions): Promise<SessionBlobRecord | null>;
  getBySessionId(sessionId: string, options?: OperationOptions): Promise<SessionBlobRecord | null>;
  /** Deletes the principal's sessions of a request; NOT_FOUND when it stored none (another's look the same). */
  deleteForRequest(requestId: string, options?: OperationOptions): Promise<number>;
  /**
   * Deletes the principal's records of one session id, whatever request they were stored for; 0
   * when there are none (deleting a session deletes whatever it has, and sending it again finds nothing).
   */
  deleteForSession(sessionId: string, options?: OperationOptions): Promise<number>;
  /** Sets when the principal's live records of a session id expire (after now); how many changed. */
  extendExpiry(sessionId: string, expiresAt: Date, options?: OperationOptions): Promise<number>;
  /** One page of the principal's live stored sessions, without their blobs, in the order they were stored. */
  list(options?: ListSessionBlobsOptions): Promise<SessionBlobSummaryPage>;
}

/** `repository` as `owner` sees it: no route passes an owner, so none can pass the wrong one. */
export function bindSessionBlobs(repository: SessionBlobRepository, owner: string): TenantSessionBlobs {
  return {
    create: (input, options) => repository.create({ ...input, owner }, options),
    getLatestForRequest: (requestId, options) => repository.getLatestForRequest(owner, requestId, options),
    getBySessionId: (sessionId, options) => repository.getBySessionId(owner, sessionId, options),
    list: (options) => repository.listByOwner(owner, options),
    extendExpiry: (sessionId, expiresAt, options) =>
      repository.extendExpiry(owner, sessionId, expiresAt, options),
    async deleteForRequest(requestId, options) {
      const deleted = await repository.deleteForRequest(owner, requestId, options);
      if (deleted === 0) throw new StowageError("NOT_FOUND", `no stored session for request ${requestId}`);
      return deleted;
    },
    deleteForSession: (sessionId, options) => repository.deleteForSession(owner, sessionId, options),
  };
}
