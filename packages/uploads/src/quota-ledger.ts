import { type ObjectStore, type OperationOptions, StowageError } from "@stowage/core";
import { formatSize } from "./format-size.js";

/** Where the ledger reads the real objects: listing of a prefix, and one object's size. */
export interface QuotaUsageSource {
  list(prefix: string, options: OperationOptions): AsyncIterable<{ key: string; size: number }>;
  head(key: string, options: OperationOptions): Promise<{ size: number; lastModified: Date } | null>;
}

/** A usage source reading an ObjectStore: `iterate` pages through the prefix, 1,000 keys a page. */
export function usageSourceFromStore(store: ObjectStore): QuotaUsageSource {
  return {
    async *list(prefix, { signal }) {
      for await (const item of store.iterate({ prefix, ...(signal ? { signal } : {}) })) yield item;
    },
    head: (key, { signal }) => store.head(key, signal ? { signal } : {}),
  };
}

/** What {@link QuotaLedger.reserve} is asked for: room for one upload URL. */
export interface QuotaReservationRequest {
  /** The prefix whose objects count against the limit: a session's prefix. */
  scope: string;
  /** The key the upload will write; under `scope`. */
  key: string;
  /** The exact size the upload URL allows. */
  bytes: number;
  /** The most `scope` may hold, reservations included. */
  limitBytes: number;
  /**
   * When the upload URL expires: the key's reservation lasts until the latest such expiry of its
   * URLs (plus the ledger's grace), commits and deletions notwithstanding.
   */
  urlExpiresAt: Date;
  /** Where the real objects are read: see {@link usageSourceFromStore}. */
  source: QuotaUsageSource;
}

/** A session's usage as a ledger counts it. */
export interface QuotaUsage {
  /** Bytes of the objects under the scope. */
  usedBytes: number;
  /** Bytes reserved by upload URLs not yet expired, beyond what their keys hold now. */
  pendingBytes: number;
  /** What counts against the limit: used + pending. */
  totalBytes: number;
  objects: number;
  /** Reserved keys whose reservation holds bytes beyond what the key holds now. */
  pendingUploads: number;
}

/** A granted reservation. */
export interface QuotaReservation {
  usage: QuotaUsage;
  /** Gives the reservation back, e.g. when the URL could not be signed after all. */
  release(options?: OperationOptions): Promise<void>;
}

/** An upload that has landed and been verified: `key` now holds `size` bytes. */
export interface QuotaCommit {
  scope: string;
  key: string;
  size: number;
}

/**
 * What a listing of a scope found, and when it started: see {@link QuotaLedger.reconcile}.
 */
export interface QuotaListing {
  /** Every object the listing saw under the scope, key → size (a repeated key: the last one counts). */
  objects: Iterable<{ key: string; size: number }>;
  /**
   * When the listing started, taken before its first page was asked for, on the clock the
   * ledger's own changes are compared with (the upload service passes its `now()`).
   */
  listedAt: Date;
}

/**
 * Keeps per-scope usage so that quota checks are race-free and cost the same whatever the
 * number of objects. Every method is atomic per scope **across processes** where the ledger is
 * shared (PostgreSQL); the memory ledger is race-free within one process only.
 *
 * Life of an upload: `reserve` (the URL is signed) → the bytes land → `commit` (verified) → the
 * reservation expires (or is ended with every other of its scope by `revoke`, when the session's
 * uploads are deleted) (a reservation past `urlExpiresAt` plus grace is settled by looking at the
 * key: what it holds then counts, nothing more); `forget` when the object is deleted. A reservation
 * ends only by expiry or `release`, never by `commit` or `forget`: a URL can be used again until it
 * expires, and several URLs for one key share one reservation of the largest size, so until the
 * last of them expires the key counts as the larger of what it holds and what was reserved. Usage
 * can then never pass the limit through any order of uploads, completions and deletions. A listing
 * of the scope (`reconcile`) replaces what the ledger believes the keys hold, except where the
 * ledger learnt something newer than the listing (see {@link QuotaLedger.reconcile}).
 *
 * Implementers write a `QuotaLedgerDriver` and wrap it with `defineQuotaLedger`, which checks
 * every input first, refuse with {@link quotaExceededError}, and run
 * `describeQuotaLedgerConformance` from `@stowage/uploads/testing`.
 */
export interface QuotaLedger {
  /**
   * Reserves `bytes` for `key` or throws QUOTA_EXCEEDED (reason `SESSION_QUOTA_EXCEEDED`); a key's
   * new size replaces its current one, never adds to it. The first use of a scope lists `source`.
   */
  reserve(request: QuotaReservationRequest, options?: OperationOptions): Promise<QuotaReservation>;
  /**
   * A verified upload: the key now holds `size` bytes. Its reservation stays until it expires (a
   * URL still valid may write the key again); it adds only what it holds beyond `size`.
   */
  commit(commit: QuotaCommit, options?: OperationOptions): Promise<void>;
  /**
   * `key` no longer holds anything (deleted, or refused after a failed verification). Its
   * reservation, if any, stays until it expires and counts in full meanwhile.
   */
  forget(scope: string, key: string, options?: OperationOptions): Promise<void>;
  /**
   * What a listing of the scope found replaces the ledger's view of the objects, with two
   * exceptions that keep a listing from undoing what happened while it ran (a listing takes time,
   * and another process may commit or delete meanwhile):
   *
   * - a key whose size the ledger recorded (a `commit`, a `forget`, or a HEAD while settling a
   *   reservation) at or after `listing.listedAt` keeps what was recorded: the listing may have
   *   passed the key before the change. A ledger whose clock is not the caller's (a database) may
   *   also keep keys recorded shortly before `listedAt`, to allow for skew between the clocks;
   *   keeping is always the safe side, and the next listing settles it.
   * - a listing that started before one the ledger already reconciled changes nothing: the later
   *   listing saw at least as much.
   *
   * On a scope never used, the listing is its first listing (the source is not listed then).
   */
  reconcile(scope: string, listing: QuotaListing, options?: OperationOptions): Promise<void>;
  /** The scope's usage now (lists `source` on first use, settles expired reservations). */
  usage(scope: string, source: QuotaUsageSource, options?: OperationOptions): Promise<QuotaUsage>;
  /**
   * The scope's upload URLs were revoked (its uploads are being deleted): every reservation ends
   * now, so what they held is free at once rather than when their URLs expire, and the scope's
   * revocation count goes up by one, atomically with the reservations it ends. What the keys hold
   * is left as it is: the caller deletes the objects and reconciles.
   */
  revoke(scope: string, options?: OperationOptions): Promise<void>;
  /**
   * How many times the scope's URLs were revoked; 0 for a scope never revoked (or never used).
   * A caller reads it before and after handing out a URL: a change means a revocation happened
   * meanwhile. It never goes down while the ledger keeps the scope (a shared ledger: always).
   */
  revocations(scope: string, options?: OperationOptions): Promise<number>;
}

/**
 * The refusal {@link QuotaLedger.reserve} throws: QUOTA_EXCEEDED, reason `SESSION_QUOTA_EXCEEDED`,
 * details `{ limitBytes, usedBytes, pendingBytes, requestedBytes }` with `usage` as the ledger
 * counted it before the request. For ledger implementers, so every ledger refuses alike.
 */
export function quotaExceededError(
  request: Pick<QuotaReservationRequest, "bytes" | "limitBytes">,
  usage: QuotaUsage,
): StowageError {
  const { limitBytes, bytes } = request;
  return new StowageError(
    "QUOTA_EXCEEDED",
    `session storage limit of ${formatSize(limitBytes)} would be exceeded: ${formatSize(usage.totalBytes)} used or reserved, ${formatSize(bytes)} requested`,
    {
      reason: "SESSION_QUOTA_EXCEEDED",
      details: {
        limitBytes,
        usedBytes: usage.usedBytes,
        pendingBytes: usage.pendingBytes,
        requestedBytes: bytes,
      },
    },
  );
}
