import type { SessionBlobLimits, SessionBlobRepository } from "@stowage/sessions";
import { resolveSessionBlobLimits } from "@stowage/sessions/backend";
import { assertDatabase, type StowageDatabase } from "../database.js";
import type { SessionBlobsContext } from "./session-blobs-context.js";
import {
  getBySessionId,
  getLatestForRequest,
  listSessionBlobs,
  listSessionBlobsByOwner,
} from "./session-blobs-reads.js";
import {
  createSessionBlob,
  deleteExpiredSessionBlobs,
  deleteSessionBlobsForRequest,
  deleteSessionBlobsOfSession,
  expireSessionBlobsForRequest,
  setSessionBlobExpiry,
} from "./session-blobs-writes.js";

export interface PostgresSessionBlobsOptions extends SessionBlobLimits {
  /** A database with Stowage's tables: `connectPostgres`/`connectEmbedded`'s `db`, or the host's own. */
  db: StowageDatabase;
}

/**
 * The session blob repository of `@stowage/sessions` on the `agent_sessions` table: every row
 * has an owner and every read and delete is made inside one (another owner's ids read as absent);
 * upsert on (owner, request id, session id), a default TTL of 7 days, expired rows never returned
 * by a read and deleted in bounded batches (after a grace period, if given), whoever owns them.
 */
export function createPostgresSessionBlobs(options: PostgresSessionBlobsOptions): SessionBlobRepository {
  const db = assertDatabase(options?.db, "createPostgresSessionBlobs");
  // Every limit of the options, maxRawBytes included: a blob is read through within it when stored.
  const context: SessionBlobsContext = { db, limits: resolveSessionBlobLimits(options) };
  return {
    create: (input, op) => createSessionBlob(context, input, op),
    getLatestForRequest: (owner, requestId, op) => getLatestForRequest(context, owner, requestId, op),
    getBySessionId: (owner, sessionId, op) => getBySessionId(context, owner, sessionId, op),
    deleteExpired: (op) => deleteExpiredSessionBlobs(context, op),
    extendExpiry: (owner, sessionId, expiresAt, op) =>
      setSessionBlobExpiry(context, owner, sessionId, expiresAt, "live", op),
    restoreExpired: (owner, sessionId, expiresAt, op) =>
      setSessionBlobExpiry(context, owner, sessionId, expiresAt, "expired", op),
    purgeExpired: (owner, sessionId, op) =>
      deleteSessionBlobsOfSession(context, owner, sessionId, "expired", op),
    expireForRequest: (owner, requestId, trashedBy, op) =>
      expireSessionBlobsForRequest(context, owner, requestId, trashedBy, op),
    deleteForRequest: (owner, requestId, op) => deleteSessionBlobsForRequest(context, owner, requestId, op),
    deleteForSession: (owner, sessionId, op) =>
      deleteSessionBlobsOfSession(context, owner, sessionId, "all", op),
    list: (op) => listSessionBlobs(context, op),
    listByOwner: (owner, op) => listSessionBlobsByOwner(context, owner, op),
  };
}
