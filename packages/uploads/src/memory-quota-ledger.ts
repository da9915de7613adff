import {
  describeValue,
  mapConcurrent,
  type OperationOptions,
  StowageError,
  throwIfAborted,
} from "@stowage/core";
import { defineQuotaLedger } from "./define-quota-ledger.js";
import {
  emptyScope,
  endReservation,
  fits,
  holdReservation,
  recomputeNextExpiry,
  replaceCommitted,
  type ScopeState,
  setCommitted,
  usageOf,
} from "./memory-quota-scope.js";
import {
  type QuotaLedger,
  type QuotaReservation,
  type QuotaReservationRequest,
  type QuotaUsageSource,
  quotaExceededError,
} from "./quota-ledger.js";

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

/** What the ledger's operations share, built once by {@link createMemoryQuotaLedger}. */
interface MemoryLedger {
  scopes: Map<string, ScopeState>;
  maxScopes: number;
  graceMs: number;
  now: () => number;
  /** Uses of the ledger so far: the clock of `ScopeState.lastUsed`. */
  uses: number;
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

/** Drops the least recently used scopes that hold nothing pending, down to 90% of the cap. */
function evict(ledger: MemoryLedger, keep: ScopeState): void {
  const target = ledger.maxScopes - Math.floor(ledger.maxScopes / 10);
  // A scope with live reservations or a running operation must stay, or its reservations would
  // vanish. Expired ones may go: a fresh listing says what settling them by HEAD would. A revoked
  // scope stays too: its count tells the upload service the session's earlier URLs are void.
  const time = ledger.now();
  const idle = [...ledger.scopes].filter(
    ([, state]) =>
      state !== keep &&
      state.busy === 0 &&
      state.revocations === 0 &&
      [...state.pending.values()].every((pending) => pending.expiresAt <= time),
  );
  idle.sort(([, a], [, b]) => a.lastUsed - b.lastUsed);
  for (const [name] of idle) {
    if (ledger.scopes.size <= target) break;
    ledger.scopes.delete(name);
  }
}

function stateOf(ledger: MemoryLedger, scope: string): ScopeState {
  let state = ledger.scopes.get(scope);
  if (!state) {
    state = emptyScope();
    ledger.scopes.set(scope, state);
    if (ledger.scopes.size > ledger.maxScopes) evict(ledger, state);
  }
  state.lastUsed = ++ledger.uses;
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

/** `change` on the scope's state, after every earlier operation of the scope, unless aborted by then. */
function inScope<T>(
  ledger: MemoryLedger,
  scope: string,
  what: string,
  signal: AbortSignal | undefined,
  change: (state: ScopeState) => T,
): Promise<T> {
  const state = stateOf(ledger, scope);
  return exclusive(state, async () => {
    throwIfAborted(signal, what);
    return change(state);
  });
}

/** Lists the prefix on the scope's first use in this process; never again after. */
async function load(
  ledger: MemoryLedger,
  state: ScopeState,
  scope: string,
  source: QuotaUsageSource,
  signal?: AbortSignal,
) {
  if (state.loaded) return;
  // Nothing of this scope changes while it is listed here: the listing is the whole truth.
  const listedAt = ledger.now();
  const byKey = new Map<string, { key: string; size: number }>();
  for await (const item of source.list(scope, { signal }))
    byKey.set(item.key, { key: item.key, size: item.size });
  state.changedAt.clear();
  replaceCommitted(state, [...byKey.values()], listedAt);
}

/** HEADs each key and records what it holds now. */
async function headAll(
  ledger: MemoryLedger,
  state: ScopeState,
  keys: string[],
  source: QuotaUsageSource,
  signal?: AbortSignal,
) {
  const heads = await mapConcurrent(
    keys,
    QUOTA_HEAD_CONCURRENCY,
    (key) => source.head(key, { signal }),
    signal,
  );
  keys.forEach((key, i) => {
    setCommitted(state, key, heads[i]?.size, ledger.now());
  });
}

async function settleExpired(
  ledger: MemoryLedger,
  state: ScopeState,
  source: QuotaUsageSource,
  signal?: AbortSignal,
) {
  const time = ledger.now();
  // Most checks end here: nothing can have expired before the earliest expiry.
  if (time < state.nextExpiry) return;
  const expired = [...state.pending].filter(([, pending]) => pending.expiresAt <= time).map(([key]) => key);
  if (expired.length > 0) {
    await headAll(ledger, state, expired, source, signal);
    for (const key of expired) endReservation(state, key);
  }
  recomputeNextExpiry(state);
}

/**
 * Reserves room for one URL, or QUOTA_EXCEEDED. Near the limit, the reserved keys are HEADed
 * first, so that uploads that already landed count as objects rather than reservations (the
 * reservations stay: a URL still valid may write its key again).
 */
async function reserve(
  ledger: MemoryLedger,
  request: QuotaReservationRequest,
  signal?: AbortSignal,
): Promise<QuotaReservation> {
  const { scope, key, bytes, limitBytes, urlExpiresAt, source } = request;
  const state = stateOf(ledger, scope);
  return exclusive(state, async () => {
    throwIfAborted(signal, "quota reserve");
    // The common case awaits nothing: the scope is listed and no reservation has expired.
    if (!state.loaded) await load(ledger, state, scope, source, signal);
    if (ledger.now() >= state.nextExpiry) await settleExpired(ledger, state, source, signal);
    if (!fits(state, key, bytes, limitBytes) && state.pending.size > 0)
      await headAll(ledger, state, [...state.pending.keys()], source, signal);
    if (!fits(state, key, bytes, limitBytes)) throw quotaExceededError(request, usageOf(state));
    const entry = holdReservation(state, key, bytes, urlExpiresAt.getTime() + ledger.graceMs);
    return {
      usage: usageOf(state),
      async release() {
        // Only a reservation that still stands for this URL alone is undone; a merged one stays.
        if (entry && state.pending.get(key) === entry && entry.holders === 1) endReservation(state, key);
      },
    };
  });
}

const signalOf = ({ signal }: OperationOptions) => signal;

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
  const ledger: MemoryLedger = {
    scopes: new Map(),
    maxScopes,
    graceMs,
    now: options.now ?? Date.now,
    uses: 0,
  };

  return defineQuotaLedger({
    reserve: (request, io) => reserve(ledger, request, signalOf(io)),

    // The reservation stays until its URLs expire: another URL for the key, or the same one
    // again, may still write up to the reserved size.
    commit: ({ scope, key, size }, io) =>
      inScope(ledger, scope, "quota commit", signalOf(io), (state) =>
        setCommitted(state, key, size, ledger.now()),
      ),

    // A reservation stays: its URL may still be used until it expires.
    forget: (scope, key, io) =>
      inScope(ledger, scope, "quota forget", signalOf(io), (state) =>
        setCommitted(state, key, undefined, ledger.now()),
      ),

    reconcile: (scope, { objects, listedAt }, io) =>
      inScope(ledger, scope, "quota reconcile", signalOf(io), (state) => {
        if (listedAt.getTime() >= state.listedAt) replaceCommitted(state, objects, listedAt.getTime());
      }),

    usage: (scope, source, io) => {
      const state = stateOf(ledger, scope);
      return exclusive(state, async () => {
        await load(ledger, state, scope, source, signalOf(io));
        await settleExpired(ledger, state, source, signalOf(io));
        return usageOf(state);
      });
    },

    revoke: (scope, io) =>
      inScope(ledger, scope, "quota revoke", signalOf(io), (state) => {
        for (const key of [...state.pending.keys()]) endReservation(state, key);
        state.nextExpiry = Number.POSITIVE_INFINITY;
        state.revocations++;
      }),

    async revocations(scope, io) {
      throwIfAborted(signalOf(io), "quota revocations");
      // Read without queueing: the count changes in one step, never halfway.
      return ledger.scopes.get(scope)?.revocations ?? 0;
    },
  });
}
