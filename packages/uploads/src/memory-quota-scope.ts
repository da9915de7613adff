import type { QuotaUsage } from "./quota-ledger.js";

// One scope (session) of the memory ledger: what each key holds, the reservations, and the
// running totals kept true as either changes. Plain functions over the state; the ledger
// (`memory-quota-ledger.ts`) serializes the calls per scope.

/** One key's reservation. */
export interface Pending {
  bytes: number;
  /** When the last URL of the key stops counting (its expiry plus grace): the entry ends then, not before. */
  expiresAt: number;
  /** URLs this entry stands for; only a single-URL entry can be released. */
  holders: number;
}

/** What the memory ledger keeps of one scope. */
export interface ScopeState {
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

export function emptyScope(): ScopeState {
  return {
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

/** Records what `key` holds now (`undefined`: nothing), stamped `at` on the ledger's clock. */
export function setCommitted(state: ScopeState, key: string, size: number | undefined, at: number): void {
  state.changedAt.set(key, at);
  changeKey(state, key, () => {
    state.committedTotal -= state.committed.get(key) ?? 0;
    if (size === undefined) state.committed.delete(key);
    else {
      state.committed.set(key, size);
      state.committedTotal += size;
    }
  });
}

export function endReservation(state: ScopeState, key: string): void {
  changeKey(state, key, () => state.pending.delete(key));
}

/** Sets `nextExpiry` to the earliest expiry of the scope's reservations, after some ended. */
export function recomputeNextExpiry(state: ScopeState): void {
  state.nextExpiry = Number.POSITIVE_INFINITY;
  for (const pending of state.pending.values())
    state.nextExpiry = Math.min(state.nextExpiry, pending.expiresAt);
}

/**
 * Replaces the view of the objects with what a listing that started at `listedAt` found (one
 * entry per key), except keys recorded at or after it, which keep their record.
 */
export function replaceCommitted(
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

export function usageOf(state: ScopeState): QuotaUsage {
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
export function fits(state: ScopeState, key: string, bytes: number, limitBytes: number): boolean {
  return state.committedTotal + state.pendingTotal + growth(state, key, bytes) <= limitBytes;
}

/**
 * Holds `bytes` for `key` until `expiresAt`: one entry per key, of the largest outstanding size,
 * held until the last URL expires. Returns the entry when this URL made it (only then can the
 * reservation be released), undefined when it joined one.
 */
export function holdReservation(
  state: ScopeState,
  key: string,
  bytes: number,
  expiresAt: number,
): Pending | undefined {
  const previous = state.pending.get(key);
  let entry: Pending | undefined;
  changeKey(state, key, () => {
    if (previous) {
      previous.bytes = Math.max(previous.bytes, bytes);
      previous.expiresAt = Math.max(previous.expiresAt, expiresAt);
      previous.holders++;
    } else if (bytes > 0) {
      entry = { bytes, expiresAt, holders: 1 };
      state.pending.set(key, entry);
    }
  });
  state.nextExpiry = Math.min(state.nextExpiry, expiresAt);
  return entry;
}
