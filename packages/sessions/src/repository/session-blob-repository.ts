import type { SessionArchive } from "../archive/session-archive.js";

/** How long a stored session is kept when `expiresAt` is not given: 7 days. */
export const DEFAULT_SESSION_TTL_MS = 7 * 24 * 60 * 60 * 1000;
/** Rows `deleteExpired` removes per statement, so that no delete holds locks for long. */
export const DEFAULT_DELETE_EXPIRED_BATCH = 1000;
/** Largest `batchSize` `deleteExpired` accepts. */
export const MAX_DELETE_EXPIRED_BATCH = 100_000;

/** A stored session: the archive plus who it belongs to and when it expires. */
export interface SessionBlobRecord extends SessionArchive {
  id: number;
  /** The host application's request (job, ticket…) this session ran for. */
  requestId: string;
  /** The agent that produced it, e.g. `claude-code`. */
  agentType: string;
  blobSizeBytes: number;
  /** When this session was stored (last replaced). */
  createdAt: Date;
  /** When it stops being returned and becomes eligible for `deleteExpired`; null: never. */
  expiresAt: Date | null;
}

export interface CreateSessionBlobInput extends SessionArchive {
  requestId: string;
  agentType: string;
  /** Default: now plus the repository's TTL ({@link DEFAULT_SESSION_TTL_MS}); null: never expires. */
  expiresAt?: Date | null;
}

export interface RepositoryOperationOptions {
  signal?: AbortSignal;
}

export interface DeleteExpiredOptions extends RepositoryOperationOptions {
  /** Rows per delete statement. Default {@link DEFAULT_DELETE_EXPIRED_BATCH}. */
  batchSize?: number;
  /** Stop after this many batches (a time-boxed cleanup run). Default: until none is left. */
  maxBatches?: number;
}

/**
 * Where captured sessions are stored between container runs. Backends implement it (PostgreSQL in
 * `@stowage/storage-postgres`); `createMemorySessionBlobRepository` is the reference. Expired
 * records are never returned, even before `deleteExpired` removes them.
 */
export interface SessionBlobRepository {
  /** Stores a session; an existing record for the same request and session is replaced (upsert). */
  create(input: CreateSessionBlobInput, options?: RepositoryOperationOptions): Promise<SessionBlobRecord>;
  /** The most recently stored, unexpired session of a request, or null. */
  getLatestForRequest(
    requestId: string,
    options?: RepositoryOperationOptions,
  ): Promise<SessionBlobRecord | null>;
  /** The most recently stored, unexpired record of a session id, or null. */
  getBySessionId(sessionId: string, options?: RepositoryOperationOptions): Promise<SessionBlobRecord | null>;
  /** Deletes expired records in bounded batches; returns how many were deleted. */
  deleteExpired(options?: DeleteExpiredOptions): Promise<number>;
  /** Deletes every record of a request; returns how many were deleted. */
  deleteForRequest(requestId: string, options?: RepositoryOperationOptions): Promise<number>;
}
