import {
  describeValue,
  mapConcurrent,
  type ObjectStore,
  type OperationOptions,
  StowageError,
  throwIfAborted,
} from "@stowage/core";
import { formatSize } from "./format-size.js";

/** How long a listed total is trusted before the prefix is listed again (picks up outside changes). */
export const DEFAULT_QUOTA_USAGE_TTL_MS = 5 * 60 * 1000;
/**
 * How long a reservation outlives its URL: S3 checks expiry when an upload starts, so a slow
 * upload begun just before expiry can still land this much later.
 */
export const DEFAULT_RESERVATION_GRACE_MS = 10 * 60 * 1000;
/** Scopes (sessions) whose usage is kept in memory; idle ones without reservations are dropped first. */
export const DEFAULT_MAX_CACHED_SCOPES = 10_000;
/** HEAD requests in flight while settling reservations. */
export const QUOTA_HEAD_CONCURRENCY = 8;
// Last-Modified has whole seconds and server clocks drift: an object modified this long before
// a reservation was issued may still be that reservation's upload.
const SEEN_TOLERANCE_MS = 2000;

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

export interface QuotaReservationRequest {
  /** The prefix whose objects count against the limit: a session's prefix. */
  scope: string;
  /** The key the upload will write; under `scope`. */
  key: string;
  /** The exact size the upload URL allows. */
  bytes: number;
  limitBytes: number;
  /** When the upload URL expires. */
  urlExpiresAt: Date;
  source: QuotaUsageSource;
}

export interface QuotaUsage {
  /** Bytes of the objects under the scope. */
  usedBytes: number;
  /** Bytes reserved by upload URLs not yet seen or expired, beyond what their keys hold now. */
  pendingBytes: number;
  /** What counts against the limit: used + pending. */
  totalBytes: number;
  objects: number;
  pendingUploads: number;
}

export interface QuotaReservation {
  usage: QuotaUsage;
  /** Gives the reservation back, e.g. when the URL could not be signed after all. */
  release(): void;
}

/**
 * Keeps per-scope usage so that quota checks are race-free and cost the same whatever the
 * number of objects. `reserve` must check and record atomically per scope.
 */
export interface QuotaLedger {
  /** Reserves `bytes` for `key` or throws QUOTA_EXCEEDED; replaces the key's current size, never adds to it. */
  reserve(request: QuotaReservationRequest, options?: OperationOptions): Promise<QuotaReservation>;
  usage(scope: string, source: QuotaUsageSource, options?: OperationOptions): Promise<QuotaUsage>;
  /** Forget the listed total of a scope (after deleting objects behind the ledger's back). */
  invalidate(scope: string): void;
}

export interface MemoryQuotaLedgerOptions {
  /** Default {@link DEFAULT_QUOTA_USAGE_TTL_MS}. */
  usageTtlMs?: number;
  /** Default {@link DEFAULT_RESERVATION_GRACE_MS}. */
  reservationGraceMs?: number;
  /** Default {@link DEFAULT_MAX_CACHED_SCOPES}. */
  maxScopes?: number;
  /** Clock in ms; default `Date.now`. */
  now?: () => number;
}

interface Pending {
  bytes: number;
  issuedAt: number;
  expiresAt: number;
  /** URLs this entry stands for; only a single-URL entry can be released. */
  holders: number;
}

interface ScopeState {
  committed: Map<string, number>;
  committedTotal: number;
  pending: Map<string, Pending>;
  loadedAt: number;
  queue: Promise<void>;
  busy: number;
}

function nonNegativeMs(what: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    throw new StowageError(
      "INVALID_INPUT",
      `createMemoryQuotaLedger: ${what} must be a non-negative number of ms, got ${describeValue(value)}`,
    );
  }
  return value;
}

/**
 * A ledger in this process's memory. Per scope it lists the prefix once (paginated, then again
 * each `usageTtlMs`), keeps each key's size and the pending reservations, and serializes
 * check-and-reserve, so concurrent requests in this process can never together pass the limit.
 * A request costs O(pending reservations of its session), not O(objects): HEADs happen only to
 * settle expired reservations, or, near the limit, to see uploads that already landed.
 *
 * Several server processes need one shared ledger (a database row per session, locked while
 * reserving) implementing {@link QuotaLedger}; separate memory ledgers do not see each other.
 */
export function createMemoryQuotaLedger(options: MemoryQuotaLedgerOptions = {}): QuotaLedger {
  const usageTtlMs = nonNegativeMs("usageTtlMs", options.usageTtlMs, DEFAULT_QUOTA_USAGE_TTL_MS);
  const graceMs = nonNegativeMs(
    "reservationGraceMs",
    options.reservationGraceMs,
    DEFAULT_RESERVATION_GRACE_MS,
  );
  const maxScopes = options.maxScopes ?? DEFAULT_MAX_CACHED_SCOPES;
  if (!Number.isSafeInteger(maxScopes) || maxScopes < 1) {
    throw new StowageError(
      "INVALID_INPUT",
      `createMemoryQuotaLedger: maxScopes must be a positive integer, got ${describeValue(maxScopes)}`,
    );
  }
  const now = options.now ?? Date.now;
  const scopes = new Map<string, ScopeState>();

  function stateOf(scope: string): ScopeState {
    let state = scopes.get(scope);
    if (state) {
      // Map order is the eviction order: move the scope to the most recently used end.
      scopes.delete(scope);
    } else {
      state = {
        committed: new Map(),
        committedTotal: 0,
        pending: new Map(),
        loadedAt: Number.NEGATIVE_INFINITY,
        queue: Promise.resolve(),
        busy: 0,
      };
    }
    scopes.set(scope, state);
    if (scopes.size > maxScopes) {
      for (const [name, candidate] of scopes) {
        if (scopes.size <= maxScopes) break;
        // A scope with reservations or a running check must stay, or its reservations would vanish.
        if (candidate !== state && candidate.pending.size === 0 && candidate.busy === 0) scopes.delete(name);
      }
    }
    return state;
  }

  function exclusive<T>(state: ScopeState, action: () => Promise<T>): Promise<T> {
    state.busy++;
    const run = state.queue.then(action);
    state.queue = run.then(
      () => {},
      () => {},
    );
    return run.finally(() => {
      state.busy--;
    });
  }

  function setCommitted(state: ScopeState, key: string, size: number | undefined): void {
    state.committedTotal -= state.committed.get(key) ?? 0;
    if (size === undefined) state.committed.delete(key);
    else {
      state.committed.set(key, size);
      state.committedTotal += size;
    }
  }

  async function refresh(state: ScopeState, scope: string, source: QuotaUsageSource, signal?: AbortSignal) {
    const startedAt = now();
    if (startedAt - state.loadedAt < usageTtlMs) return;
    const committed = new Map<string, number>();
    let total = 0;
    for await (const item of source.list(scope, { signal })) {
      committed.set(item.key, item.size);
      total += item.size;
    }
    state.committed = committed;
    state.committedTotal = total;
    state.loadedAt = startedAt;
  }

  /** HEADs each key and records what it holds now; `settle` decides which reservations end. */
  async function headAll(
    state: ScopeState,
    keys: string[],
    source: QuotaUsageSource,
    settle: (key: string, head: { size: number; lastModified: Date } | null) => boolean,
    signal?: AbortSignal,
  ) {
    const heads = await mapConcurrent(
      keys,
      QUOTA_HEAD_CONCURRENCY,
      (key) => source.head(key, { signal }),
      signal,
    );
    keys.forEach((key, i) => {
      const head = heads[i] ?? null;
      setCommitted(state, key, head?.size);
      if (settle(key, head)) state.pending.delete(key);
    });
  }

  async function settleExpired(state: ScopeState, source: QuotaUsageSource, signal?: AbortSignal) {
    const time = now();
    const expired = [...state.pending].filter(([, pending]) => pending.expiresAt <= time).map(([key]) => key);
    if (expired.length > 0) await headAll(state, expired, source, () => true, signal);
  }

  /** Ends reservations whose upload has landed: the object has the reserved size and is newer. */
  async function settleSeen(state: ScopeState, source: QuotaUsageSource, signal?: AbortSignal) {
    const keys = [...state.pending.keys()];
    if (keys.length === 0) return;
    await headAll(
      state,
      keys,
      source,
      (key, head) => {
        const pending = state.pending.get(key)!;
        return (
          head !== null &&
          head.size === pending.bytes &&
          head.lastModified.getTime() >= pending.issuedAt - SEEN_TOLERANCE_MS
        );
      },
      signal,
    );
  }

  function usageOf(state: ScopeState): QuotaUsage {
    let pendingBytes = 0;
    for (const [key, pending] of state.pending) {
      pendingBytes += Math.max(0, pending.bytes - (state.committed.get(key) ?? 0));
    }
    return {
      usedBytes: state.committedTotal,
      pendingBytes,
      totalBytes: state.committedTotal + pendingBytes,
      objects: state.committed.size,
      pendingUploads: state.pending.size,
    };
  }

  /** Bytes the total grows by if `key` ends up holding `bytes`: only beyond what it may hold already. */
  function growth(state: ScopeState, key: string, bytes: number): number {
    const current = Math.max(state.committed.get(key) ?? 0, state.pending.get(key)?.bytes ?? 0);
    return Math.max(0, bytes - current);
  }

  function validate(request: QuotaReservationRequest): void {
    const { scope, key, bytes, limitBytes, urlExpiresAt } = request;
    if (typeof scope !== "string" || typeof key !== "string" || !key.startsWith(scope) || key === scope) {
      throw new StowageError(
        "INVALID_INPUT",
        `quota reservation: key ${describeValue(key)} must be under scope ${describeValue(scope)}`,
      );
    }
    if (!Number.isSafeInteger(bytes) || bytes < 0 || !Number.isSafeInteger(limitBytes) || limitBytes < 0) {
      throw new StowageError(
        "INVALID_INPUT",
        `quota reservation: bytes and limitBytes must be non-negative integers, got ${describeValue({ bytes, limitBytes })}`,
      );
    }
    if (!(urlExpiresAt instanceof Date) || Number.isNaN(urlExpiresAt.getTime())) {
      throw new StowageError(
        "INVALID_INPUT",
        `quota reservation: urlExpiresAt must be a Date, got ${describeValue(urlExpiresAt)}`,
      );
    }
  }

  return {
    async reserve(request, { signal } = {}) {
      validate(request);
      const { scope, key, bytes, limitBytes, urlExpiresAt, source } = request;
      const state = stateOf(scope);
      return exclusive(state, async () => {
        throwIfAborted(signal, "quota reserve");
        await refresh(state, scope, source, signal);
        await settleExpired(state, source, signal);
        if (usageOf(state).totalBytes + growth(state, key, bytes) > limitBytes && state.pending.size > 0) {
          await settleSeen(state, source, signal);
        }
        const before = usageOf(state);
        const requested = growth(state, key, bytes);
        if (before.totalBytes + requested > limitBytes) {
          throw new StowageError(
            "QUOTA_EXCEEDED",
            `session storage limit of ${formatSize(limitBytes)} would be exceeded: ${formatSize(before.totalBytes)} used or reserved, ${formatSize(bytes)} requested`,
            {
              reason: "SESSION_QUOTA_EXCEEDED",
              details: {
                limitBytes,
                usedBytes: before.usedBytes,
                pendingBytes: before.pendingBytes,
                requestedBytes: bytes,
              },
            },
          );
        }
        const issuedAt = now();
        const expiresAt = urlExpiresAt.getTime() + graceMs;
        const previous = state.pending.get(key);
        let entry: Pending | undefined;
        if (previous) {
          // One entry per key: the largest outstanding size, held until the last URL expires.
          if (bytes > previous.bytes) {
            previous.bytes = bytes;
            previous.issuedAt = issuedAt;
          }
          previous.expiresAt = Math.max(previous.expiresAt, expiresAt);
          previous.holders++;
        } else if (bytes > 0) {
          entry = { bytes, issuedAt, expiresAt, holders: 1 };
          state.pending.set(key, entry);
        }
        return {
          usage: usageOf(state),
          release() {
            // Only a reservation that still stands for this URL alone is undone; a merged one stays.
            if (entry && state.pending.get(key) === entry && entry.holders === 1) state.pending.delete(key);
          },
        };
      });
    },

    async usage(scope, source, { signal } = {}) {
      const state = stateOf(scope);
      return exclusive(state, async () => {
        await refresh(state, scope, source, signal);
        await settleExpired(state, source, signal);
        return usageOf(state);
      });
    },

    invalidate(scope) {
      const state = scopes.get(scope);
      if (state) state.loadedAt = Number.NEGATIVE_INFINITY;
    },
  };
}
