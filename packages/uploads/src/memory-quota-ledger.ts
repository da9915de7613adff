import { describeValue, mapConcurrent, StowageError, throwIfAborted } from "@stowage/core";
import {
  type QuotaLedger,
  type QuotaUsage,
  type QuotaUsageSource,
  quotaExceededError,
} from "./quota-ledger.js";
import {
  assertQuotaCommit,
  assertQuotaKey,
  assertQuotaReservationRequest,
  assertQuotaScope,
  assertQuotaUsageSource,
  checkQuotaListing,
} from "./quota-ledger-input.js";

/**
 * How long a reservation outlives its URL: S3 checks expiry when an upload starts, so a slow
 * upload begun just before expiry can still land this much later.
 */
const DEFAULT_RESERVATION_GRACE_MS = 10 * 60 * 1000;
/** Scopes (sessions) whose usage is kept in memory; idle ones without live reservations are dropped first. */
const DEFAULT_MAX_CACHED_SCOPES = 10_000;
/** HEAD requests in flight while settling reservations. */
const QUOTA_HEAD_CONCURRENCY = 8;

/** Options of {@link createMemoryQuotaLedger}. */
export interface MemoryQuotaLedgerOptions {
  /** How long a reservation outlives its URL's expiry; default 10 minutes. */
  reservationGraceMs?: number;
  /** Sessions whose usage is kept in memory; idle ones without live reservations go first. Default 10,000. */
  maxScopes?: number;
  /** Clock in ms; default `Date.now`. */
  now?: () => number;
}

interface Pending {
  bytes: number;
  /** When the last URL of the key stops counting (its expiry plus grace): the entry ends then, not before. */
  expiresAt: number;
  /** URLs this entry stands for; only a single-URL entry can be released. */
  holders: number;
}

interface ScopeState {
  committed: Map<string, number>;
  committedTotal: number;
  /**
   * When the ledger last recorded what a key holds outside a listing (commit, forget, a HEAD),
   * forgotten keys included: a listing that started before that time keeps the record. Entries
   * a reconciled listing supersedes are dropped.
   */
  changedAt: Map<string, number>;
  /** When the latest listing applied to the scope started; an older one changes nothing. */
  listedAt: number;
  pending: Map<string, Pending>;
  /** Σ over reserved keys of what the reservation holds beyond the key's object: kept as keys change. */
  pendingTotal: number;
  /** Reserved keys whose reservation holds bytes beyond the key's object: kept with `pendingTotal`. */
  pendingCount: number;
  /** The earliest `expiresAt` of the reservations (or later): none has expired before it. */
  nextExpiry: number;
  /** The prefix has been listed (or reconciled) since the scope entered memory. */
  loaded: boolean;
  queue: Promise<void>;
  /** Operations started and not yet settled. */
  busy: number;
  /** When the scope was last used, in uses of the ledger: the eviction order. */
  lastUsed: number;
  /** How many times the scope's URLs were revoked: a scope with any is never evicted. */
  revocations: number;
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
 * A ledger in this process's memory. Per scope it lists the prefix once, on first use
 * (paginated); after that its view changes only through `commit`, `forget`, `reconcile` (a
 * listing's findings) and the settling of reservations, never through a timer. It keeps each
 * key's size and the pending reservations, and serializes every operation per scope, so
 * concurrent requests in this process can never together pass the limit. A reservation lasts until
 * the last URL signed for its key expires (plus grace), commits and deletions notwithstanding:
 * until then the key counts as the larger of what it holds and what was reserved. A request costs
 * O(pending reservations of its session), not O(objects): HEADs happen only to settle expired
 * reservations, or, near the limit, to see uploads that already landed.
 *
 * Several server processes need one shared ledger (a database row per session, locked while
 * reserving) implementing {@link QuotaLedger}; separate memory ledgers do not see each other.
 */
export function createMemoryQuotaLedger(options: MemoryQuotaLedgerOptions = {}): QuotaLedger {
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

  let uses = 0;

  /** Drops the least recently used scopes that hold nothing pending, down to 90% of the cap. */
  function evict(keep: ScopeState): void {
    const target = maxScopes - Math.floor(maxScopes / 10);
    // A scope with live reservations or a running operation must stay, or its reservations would
    // vanish. Expired ones may go: a fresh listing says what settling them by HEAD would. A revoked
    // scope stays too: its count tells the upload service the session's earlier URLs are void.
    const time = now();
    const idle = [...scopes].filter(
      ([, state]) =>
        state !== keep &&
        state.busy === 0 &&
        state.revocations === 0 &&
        [...state.pending.values()].every((pending) => pending.expiresAt <= time),
    );
    idle.sort(([, a], [, b]) => a.lastUsed - b.lastUsed);
    for (const [name] of idle) {
      if (scopes.size <= target) break;
      scopes.delete(name);
    }
  }

  function stateOf(scope: string): ScopeState {
    let state = scopes.get(scope);
    if (!state) {
      state = {
        committed: new Map(),
        committedTotal: 0,
        changedAt: new Map(),
        listedAt: Number.NEGATIVE_INFINITY,
        pending: new Map(),
        pendingTotal: 0,
        pendingCount: 0,
        nextExpiry: Number.POSITIVE_INFINITY,
        loaded: false,
        queue: Promise.resolve(),
        busy: 0,
        lastUsed: 0,
        revocations: 0,
      };
      scopes.set(scope, state);
      if (scopes.size > maxScopes) evict(state);
    }
    state.lastUsed = ++uses;
    return state;
  }

  /** Runs `action` after every earlier operation of the scope has settled. */
  function exclusive<T>(state: ScopeState, action: () => Promise<T>): Promise<T> {
    // Nothing queued: start at once rather than a tick later.
    const run = state.busy === 0 ? action() : state.queue.then(action);
    state.busy++;
    const done = () => {
      state.busy--;
    };
    state.queue = run.then(done, done);
    return run;
  }

  /** What `key`'s reservation holds beyond its object: what it adds to the pending total. */
  function excessOf(state: ScopeState, key: string): number {
    const pending = state.pending.get(key);
    return pending ? Math.max(0, pending.bytes - (state.committed.get(key) ?? 0)) : 0;
  }

  /** Runs `change` on one key's object or reservation, keeping the scope's pending figures true. */
  function changeKey(state: ScopeState, key: string, change: () => void): void {
    const before = excessOf(state, key);
    change();
    const after = excessOf(state, key);
    state.pendingTotal += after - before;
    state.pendingCount += Number(after > 0) - Number(before > 0);
  }

  /** Records what `key` holds now (`undefined`: nothing), stamped with the ledger's clock. */
  function setCommitted(state: ScopeState, key: string, size: number | undefined): void {
    state.changedAt.set(key, now());
    changeKey(state, key, () => {
      state.committedTotal -= state.committed.get(key) ?? 0;
      if (size === undefined) state.committed.delete(key);
      else {
        state.committed.set(key, size);
        state.committedTotal += size;
      }
    });
  }

  function endReservation(state: ScopeState, key: string): void {
    changeKey(state, key, () => state.pending.delete(key));
  }

  /**
   * Replaces the view of the objects with what a listing that started at `listedAt` found (one
   * entry per key), except keys recorded at or after it, which keep their record.
   */
  function replaceCommitted(
    state: ScopeState,
    objects: readonly { key: string; size: number }[],
    listedAt: number,
  ): void {
    const committed = new Map<string, number>();
    for (const { key, size } of objects) committed.set(key, size);
    for (const [key, at] of state.changedAt) {
      if (at < listedAt) {
        state.changedAt.delete(key);
        continue;
      }
      const recorded = state.committed.get(key);
      if (recorded === undefined) committed.delete(key);
      else committed.set(key, recorded);
    }
    let total = 0;
    for (const size of committed.values()) total += size;
    state.committed = committed;
    state.committedTotal = total;
    state.pendingTotal = 0;
    state.pendingCount = 0;
    for (const key of state.pending.keys()) {
      const excess = excessOf(state, key);
      state.pendingTotal += excess;
      if (excess > 0) state.pendingCount++;
    }
    state.listedAt = listedAt;
    state.loaded = true;
  }

  /** Lists the prefix on the scope's first use in this process; never again after. */
  async function load(state: ScopeState, scope: string, source: QuotaUsageSource, signal?: AbortSignal) {
    if (state.loaded) return;
    // Nothing of this scope changes while it is listed here: the listing is the whole truth.
    const listedAt = now();
    const byKey = new Map<string, { key: string; size: number }>();
    for await (const item of source.list(scope, { signal }))
      byKey.set(item.key, { key: item.key, size: item.size });
    state.changedAt.clear();
    replaceCommitted(state, [...byKey.values()], listedAt);
  }

  /** HEADs each key and records what it holds now. */
  async function headAll(state: ScopeState, keys: string[], source: QuotaUsageSource, signal?: AbortSignal) {
    const heads = await mapConcurrent(
      keys,
      QUOTA_HEAD_CONCURRENCY,
      (key) => source.head(key, { signal }),
      signal,
    );
    keys.forEach((key, i) => {
      setCommitted(state, key, heads[i]?.size);
    });
  }

  async function settleExpired(state: ScopeState, source: QuotaUsageSource, signal?: AbortSignal) {
    const time = now();
    // Most checks end here: nothing can have expired before the earliest expiry.
    if (time < state.nextExpiry) return;
    const expired = [...state.pending].filter(([, pending]) => pending.expiresAt <= time).map(([key]) => key);
    if (expired.length > 0) {
      await headAll(state, expired, source, signal);
      for (const key of expired) endReservation(state, key);
    }
    state.nextExpiry = Number.POSITIVE_INFINITY;
    for (const pending of state.pending.values())
      state.nextExpiry = Math.min(state.nextExpiry, pending.expiresAt);
  }

  /**
   * Records what the reserved keys hold now, so that uploads that already landed count as objects
   * rather than reservations. The reservations stay: a URL still valid may write its key again.
   */
  async function settleSeen(state: ScopeState, source: QuotaUsageSource, signal?: AbortSignal) {
    const keys = [...state.pending.keys()];
    if (keys.length > 0) await headAll(state, keys, source, signal);
  }

  function usageOf(state: ScopeState): QuotaUsage {
    return {
      usedBytes: state.committedTotal,
      pendingBytes: state.pendingTotal,
      totalBytes: state.committedTotal + state.pendingTotal,
      objects: state.committed.size,
      pendingUploads: state.pendingCount,
    };
  }

  /** Bytes the total grows by if `key` ends up holding `bytes`: only beyond what it may hold already. */
  function growth(state: ScopeState, key: string, bytes: number): number {
    const current = Math.max(state.committed.get(key) ?? 0, state.pending.get(key)?.bytes ?? 0);
    return Math.max(0, bytes - current);
  }

  /** Whether `key` may hold `bytes` without the scope's total passing `limitBytes`. */
  function fits(state: ScopeState, key: string, bytes: number, limitBytes: number): boolean {
    return state.committedTotal + state.pendingTotal + growth(state, key, bytes) <= limitBytes;
  }

  return {
    async reserve(request, { signal } = {}) {
      assertQuotaReservationRequest(request);
      const { scope, key, bytes, limitBytes, urlExpiresAt, source } = request;
      const state = stateOf(scope);
      return exclusive(state, async () => {
        throwIfAborted(signal, "quota reserve");
        // The common case awaits nothing: the scope is listed and no reservation has expired.
        if (!state.loaded) await load(state, scope, source, signal);
        if (now() >= state.nextExpiry) await settleExpired(state, source, signal);
        if (!fits(state, key, bytes, limitBytes) && state.pending.size > 0)
          await settleSeen(state, source, signal);
        if (!fits(state, key, bytes, limitBytes)) throw quotaExceededError(request, usageOf(state));
        const expiresAt = urlExpiresAt.getTime() + graceMs;
        const previous = state.pending.get(key);
        let entry: Pending | undefined;
        changeKey(state, key, () => {
          if (previous) {
            // One entry per key: the largest outstanding size, held until the last URL expires.
            previous.bytes = Math.max(previous.bytes, bytes);
            previous.expiresAt = Math.max(previous.expiresAt, expiresAt);
            previous.holders++;
          } else if (bytes > 0) {
            entry = { bytes, expiresAt, holders: 1 };
            state.pending.set(key, entry);
          }
        });
        state.nextExpiry = Math.min(state.nextExpiry, expiresAt);
        return {
          usage: usageOf(state),
          async release() {
            // Only a reservation that still stands for this URL alone is undone; a merged one stays.
            if (entry && state.pending.get(key) === entry && entry.holders === 1) endReservation(state, key);
          },
        };
      });
    },

    async commit(commit, { signal } = {}) {
      assertQuotaCommit(commit);
      const { scope, key, size } = commit;
      const state = stateOf(scope);
      return exclusive(state, async () => {
        throwIfAborted(signal, "quota commit");
        // The reservation stays until its URLs expire: another URL for the key, or the same one
        // again, may still write up to the reserved size.
        setCommitted(state, key, size);
      });
    },

    async forget(scope, key, { signal } = {}) {
      assertQuotaKey(scope, key);
      const state = stateOf(scope);
      return exclusive(state, async () => {
        throwIfAborted(signal, "quota forget");
        // A reservation stays: its URL may still be used until it expires.
        setCommitted(state, key, undefined);
      });
    },

    async reconcile(scope, listing, { signal } = {}) {
      const { objects, listedAt } = checkQuotaListing(scope, listing);
      const state = stateOf(scope);
      return exclusive(state, async () => {
        throwIfAborted(signal, "quota reconcile");
        if (listedAt.getTime() < state.listedAt) return;
        replaceCommitted(state, objects, listedAt.getTime());
      });
    },

    async usage(scope, source, { signal } = {}) {
      assertQuotaScope(scope);
      assertQuotaUsageSource(source);
      const state = stateOf(scope);
      return exclusive(state, async () => {
        await load(state, scope, source, signal);
        await settleExpired(state, source, signal);
        return usageOf(state);
      });
    },

    async revoke(scope, { signal } = {}) {
      assertQuotaScope(scope);
      const state = stateOf(scope);
      return exclusive(state, async () => {
        throwIfAborted(signal, "quota revoke");
        for (const key of [...state.pending.keys()]) endReservation(state, key);
        state.nextExpiry = Number.POSITIVE_INFINITY;
        state.revocations++;
      });
    },

    async revocations(scope, { signal } = {}) {
      assertQuotaScope(scope);
      throwIfAborted(signal, "quota revocations");
      // Read without queueing: the count changes in one step, never halfway.
      return scopes.get(scope)?.revocations ?? 0;
    },
  };
}
