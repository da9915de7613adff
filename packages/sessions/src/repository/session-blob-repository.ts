import type { SessionArchive } from "../archive/session-archive.js";

/** How long a stored session is kept when `expiresAt` is not given: 7 days. */
export const DEFAULT_SESSION_TTL_MS = 7 * 24 * 60 * 60 * 1000;
/** Rows `deleteExpired` removes per statement, so that no delete holds locks for long. */
export const DEFAULT_DELETE_EXPIRED_BATCH = 1000;
/** Largest `batchSize` `deleteExpired` accepts. */
export const MAX_DELETE_EXPIRED_BATCH = 100_000;
/** Records per `list` page when no `limit` is given: pages hold whole blobs (up to 64 MiB each). */
export const DEFAULT_SESSION_BLOB_PAGE_SIZE = 20;
/** Largest `limit` `list` accepts. */
export const MAX_SESSION_BLOB_PAGE_SIZE = 1000;

/** A stored session: the archive plus who it belongs to and when it expires. */
export interface SessionBlobRecord extends SessionArchive {
  id: number;
  /**
   * Who the session belongs to: an opaque safe id chosen by the host (the reference app passes
   * its principal, `user:alice` or `org:acme`). Every lookup is made inside one owner.
   */
  owner: string;
  /** The host application's request (job, ticket…) this session ran for. */
  requestId: string;
  /** The agent that produced it, e.g. `claude-code`. */
  agentType: string;
  blobSizeBytes: number;
  /**
   * What storing it added to storage: for a capture kept as chunks (`captureSession({ blobs })`,
   * `chunkSessionBlob`), the chunks and payloads new to its owner's blob store plus the blob; for
   * a self-contained archive, the blob's size.
   */
  storedBytes: number;
  /** When this session was stored (last replaced). */
  createdAt: Date;
  /** When it stops being returned and becomes eligible for `deleteExpired`; null: never. */
  expiresAt: Date | null;
  /**
   * Who deleted it before its time ({@link SessionBlobRepository.expireForRequest}): it expired
   * then, into the trash of stored sessions. Absent on a live record and on one its TTL expired;
   * a restore, an extension or a new capture of it clears it.
   */
  trashedBy?: string;
}

export interface CreateSessionBlobInput extends SessionArchive {
  /** Who the session belongs to: a safe id of at most 255 characters. */
  owner: string;
  requestId: string;
  agentType: string;
  /** What storing it added (see {@link SessionBlobRecord.storedBytes}); default the blob's size. */
  storedBytes?: number;
  /** Default: now plus the repository's TTL (`ttlMs`, 7 days unless set); null: never expires. */
  expiresAt?: Date | null;
}

export interface RepositoryOperationOptions {
  signal?: AbortSignal;
}

/** Options of {@link SessionBlobRepository.create}. */
export interface CreateSessionBlobOptions extends RepositoryOperationOptions {
  /**
   * The blob is the ciphertext of an archive the caller verified itself (`verifySessionBlob`,
   * which also measured `rawSizeBytes`): stored as given instead of read through. For an
   * encrypting wrapper only (tenancy's, with `createStowage({ encryption })`); a blob stored this
   * way without that check fails at its restore instead of here.
   */
  preverified?: boolean;
}

export interface DeleteExpiredOptions extends RepositoryOperationOptions {
  /** Rows per delete statement, 1 to 100,000. Default 1,000. */
  batchSize?: number;
  /** Stop after this many batches (a time-boxed cleanup run). Default: until none is left. */
  maxBatches?: number;
  /**
   * Keep the records that expired less than this many milliseconds ago: a trash's grace period,
   * in which an owner still sees them (`listByOwner(owner, { expired: true })`) and can bring
   * them back (`restoreExpired`). Default 0: every expired record goes.
   */
  graceMs?: number;
  /**
   * Called after each batch with what it deleted (an audit of deletions records it), before the
   * next batch starts; when it throws, no further batch runs and `deleteExpired` rejects with its
   * error. Each record is reported by exactly one of two cleaners running at once.
   */
  onDeleted?: (deleted: readonly ExpiredSessionBlob[]) => void | Promise<void>;
}

/** What `deleteExpired` tells `onDeleted` of a record it deleted: ids, sizes and expiry, never the blob. */
export type ExpiredSessionBlob = Pick<
  SessionBlobRecord,
  "id" | "owner" | "requestId" | "sessionId" | "blobSizeBytes" | "storedBytes" | "expiresAt"
>;

export interface ListSessionBlobsOptions extends RepositoryOperationOptions {
  /** The `cursor` of the previous page; absent for the first page. */
  cursor?: string;
  /** Records per page, 1 to 1,000. Default 20. */
  limit?: number;
}

/** Options of {@link SessionBlobRepository.listByOwner}. */
export interface ListOwnedSessionBlobsOptions extends ListSessionBlobsOptions {
  /** The owner's expired records, not yet deleted, instead of the live ones. Default false. */
  expired?: boolean;
}

/** A stored session as a listing of its owner's shows it: the record without its blob. */
export type SessionBlobSummary = Omit<SessionBlobRecord, "blob">;

/** One page of {@link SessionBlobRepository.listByOwner}. */
export interface SessionBlobSummaryPage {
  /** In id order (the order they were first stored). */
  sessions: SessionBlobSummary[];
  /** Pass it back for the next page; absent once nothing follows. */
  cursor?: string;
}

/** One page of {@link SessionBlobRepository.list}. */
export interface SessionBlobPage {
  records: SessionBlobRecord[];
  /** Pass it back for the next page; absent once nothing follows (a full page may carry one and be followed by an empty page). */
  cursor?: string;
}

/**
 * Where captured sessions are stored between container runs. Backends implement it (PostgreSQL in
 * `@stowage/storage-postgres`); `createMemorySessionBlobRepository` is the reference. Expired
 * records are never returned by a read, even before `deleteExpired` removes them; until then they
 * are still stored: listed by `list` (what garbage collection must keep) and, asked for, by
 * `listByOwner`, and `restoreExpired` can bring them back.
 *
 * Every record belongs to an owner, and every read and delete names one: another owner's request
 * or session id is simply not there (null, 0), never an error that would tell it exists. Two
 * owners may use the same request id and session id without meeting.
 *
 * A record a read returns (`getLatestForRequest`, `getBySessionId`, `list`) holds a blob of the
 * caller's own, a new buffer each call, so that a caller may change it (tenancy's encrypting
 * wrapper opens the archive over its ciphertext instead of into a second buffer).
 */
export interface SessionBlobRepository {
  /**
   * Stores a session; an existing record for the same owner, request and session is replaced
   * (upsert on the three).
   */
  create(input: CreateSessionBlobInput, options?: CreateSessionBlobOptions): Promise<SessionBlobRecord>;
  /** The owner's most recently stored, unexpired session of a request, or null. */
  getLatestForRequest(
    owner: string,
    requestId: string,
    options?: RepositoryOperationOptions,
  ): Promise<SessionBlobRecord | null>;
  /** The owner's most recently stored, unexpired record of a session id, or null. */
  getBySessionId(
    owner: string,
    sessionId: string,
    options?: RepositoryOperationOptions,
  ): Promise<SessionBlobRecord | null>;
  /**
   * Deletes expired records of every owner (those expired `graceMs` ago or more) in bounded
   * batches; returns how many were deleted.
   */
  deleteExpired(options?: DeleteExpiredOptions): Promise<number>;
  /**
   * Sets when the owner's live records of a session id expire (every request's), to a time after
   * now (INVALID_INPUT otherwise; a host caps how far, see the app's `STOWAGE_MAX_EXPIRY_DAYS`);
   * returns how many records changed: 0 when the owner has no live record of it.
   */
  extendExpiry(
    owner: string,
    sessionId: string,
    expiresAt: Date,
    options?: RepositoryOperationOptions,
  ): Promise<number>;
  /**
   * Sets when the owner's expired records of a session id that `deleteExpired` has not removed yet
   * (every request's) expire, to a time after now: a restore from the trash of stored sessions.
   * Returns how many records changed: 0 when none is left (purged, or never there).
   */
  restoreExpired(
    owner: string,
    sessionId: string,
    expiresAt: Date,
    options?: RepositoryOperationOptions,
  ): Promise<number>;
  /**
   * Deletes the owner's expired records of a session id now, whatever their grace (a purge from
   * the trash); its live records, a capture stored since, stay. Returns how many were deleted.
   */
  purgeExpired(owner: string, sessionId: string, options?: RepositoryOperationOptions): Promise<number>;
  /**
   * Expires the owner's live records of a request now, recording `trashedBy` (who deleted them,
   * a safe id such as `key:k1`): a deletion through the trash of stored sessions, which
   * `listByOwner({ expired: true })` lists, `restoreExpired` brings back and `deleteExpired`
   * purges once their grace is over. Returns how many records changed: 0 when the owner has no
   * live record of the request.
   */
  expireForRequest(
    owner: string,
    requestId: string,
    trashedBy: string,
    options?: RepositoryOperationOptions,
  ): Promise<number>;
  /** Deletes every record the owner stored for a request; returns how many were deleted. */
  deleteForRequest(owner: string, requestId: string, options?: RepositoryOperationOptions): Promise<number>;
  /**
   * Deletes every record the owner stored of a session id, whatever request it was stored for and
   * expired or not; returns how many were deleted. Another session stored for the same request
   * stays: what deleting one session (and nothing else) needs.
   */
  deleteForSession(owner: string, sessionId: string, options?: RepositoryOperationOptions): Promise<number>;
  /**
   * Every stored record of every owner, a page at a time in id order, expired ones that
   * `deleteExpired` has not removed yet included (a restore may bring them back): for maintenance
   * that must see all that is stored, such as the roots of blob garbage collection (each blob
   * decompressed and scanned for `blob:sha256:` refs). A record replaced by an upsert keeps its
   * id, so its place; one stored while a listing runs is on a later page or not at all. The
   * cursor is the last record's id in decimal, opaque to callers.
   */
  list(options?: ListSessionBlobsOptions): Promise<SessionBlobPage>;
  /**
   * The owner's live (unexpired) stored sessions without their blobs, a page at a time in id
   * order: what a user is shown of what is stored for them (agent, sizes, expiry). With
   * `expired: true`, the expired ones not yet deleted instead (a trash). The cursor is the last
   * record's id in decimal, opaque to callers; `limit` as for {@link list}.
   */
  listByOwner(owner: string, options?: ListOwnedSessionBlobsOptions): Promise<SessionBlobSummaryPage>;
}
