import { type OperationOptions, type Principal, StowageError } from "@stowage/core";
import {
  handleUploadRequest,
  type SessionDeletion,
  type TrashedSessionUploads,
  type UploadService,
} from "@stowage/uploads";
import type { RegisteredSessions } from "./shared/registered-sessions.js";

/** One principal's uploads: the upload service with the principal filled in. */
export interface TenantUploads {
  /**
   * The upload API (`/agents/*`) on behalf of the principal: `@stowage/uploads`' handler, given
   * the principal the caller authenticated (it reads no Authorization header).
   */
  handle(request: Request): Promise<Response>;
  /**
   * Deletes every upload of one of the principal's sessions and revokes its upload URLs;
   * NOT_FOUND (reason `SESSION_NOT_FOUND`) when the session is not registered in its namespace,
   * or is in the trash.
   */
  deleteSession(sessionId: string, options?: OperationOptions): Promise<SessionDeletion>;
  /**
   * Deletes the session's uploads into the trash (the service's `trashSessionUploads`), `by` whom;
   * NOT_FOUND (`SESSION_NOT_FOUND`) as `deleteSession`.
   */
  trash(sessionId: string, by: string, options?: OperationOptions): Promise<TrashedSessionUploads>;
  /** Bytes of the session's uploads (what its quota counts), while it is registered. */
  bytes(sessionId: string, options?: OperationOptions): Promise<number>;
}

/** `service` on behalf of `principal`, for the sessions registered in its namespace. */
export function bindUploads(
  service: UploadService,
  principal: Principal,
  registeredSessions: RegisteredSessions,
): TenantUploads {
  return {
    handle: (request) => handleUploadRequest(service, request, { principal }),
    async deleteSession(sessionId, options = {}) {
      // A session in the trash keeps its uploads until it is restored or purged (its purge runs
      // from the "deleting" state, which passes).
      const state = await registeredSessions.state(sessionId, options);
      if (state === null || state === "trashed") {
        throw new StowageError("NOT_FOUND", `no session ${sessionId}`, { reason: "SESSION_NOT_FOUND" });
      }
      return service.deleteSessionUploads(principal, sessionId, options);
    },
    async trash(sessionId, by, options = {}) {
      const state = await registeredSessions.state(sessionId, options);
      if (state === null || state === "trashed") {
        throw new StowageError("NOT_FOUND", `no session ${sessionId}`, { reason: "SESSION_NOT_FOUND" });
      }
      return service.trashSessionUploads(principal, sessionId, { ...options, by });
    },
    async bytes(sessionId, options = {}) {
      const uploads = await service.listUploads(principal, sessionId, options);
      return uploads.reduce((sum, upload) => sum + upload.size, 0);
    },
  };
}
