import { assertSafeKey, assertSafeKeyPrefix, describeValue, StowageError } from "@stowage/core";
import type { QuotaCommit, QuotaListing, QuotaReservationRequest, QuotaUsageSource } from "./quota-ledger.js";

// The checks `defineQuotaLedger` makes before a ledger touches its state, one per method, so that
// every ledger refuses the same input with the same code (INVALID_INPUT) and stores nothing.

/** Throws INVALID_INPUT unless `scope` is a non-empty safe key prefix. */
export function assertQuotaScope(scope: unknown): asserts scope is string {
  assertSafeKeyPrefix(scope, "quota scope");
  if (scope === "") throw new StowageError("INVALID_INPUT", "quota ledger: scope must not be empty");
}

/** Throws INVALID_INPUT unless `key` is a safe key strictly under the safe `scope`. */
export function assertQuotaKey(scope: unknown, key: unknown): asserts key is string {
  if (typeof scope !== "string" || scope === "") assertQuotaScope(scope);
  assertSafeKey(key, "quota key");
  if (!key.startsWith(scope) || key === scope) {
    throw new StowageError(
      "INVALID_INPUT",
      `quota ledger: key ${describeValue(key)} must be under scope ${describeValue(scope)}`,
    );
  }
  // The key's one scan also vouches for the scope, its start: every whole segment of a safe key is
  // safe, and a prefix may only not end in a partial `..` (this runs once per reservation).
  if (scope === ".." || scope.endsWith("/..")) assertQuotaScope(scope);
}

/** Throws INVALID_INPUT unless `value` is a byte count: a non-negative safe integer. */
function assertByteCount(value: unknown, what: string): asserts value is number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw new StowageError(
      "INVALID_INPUT",
      `quota ledger: ${what} must be a non-negative integer, got ${describeValue(value)}`,
    );
  }
}

/** Throws INVALID_INPUT unless `value` is a valid Date. */
function assertDate(value: unknown, what: string): asserts value is Date {
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) {
    throw new StowageError(
      "INVALID_INPUT",
      `quota ledger: ${what} must be a Date, got ${describeValue(value)}`,
    );
  }
}

/** Throws INVALID_INPUT unless `source` can list and head objects. */
export function assertQuotaUsageSource(source: unknown): asserts source is QuotaUsageSource {
  const candidate = source as Partial<QuotaUsageSource> | null | undefined;
  if (typeof candidate?.list !== "function" || typeof candidate.head !== "function") {
    throw new StowageError(
      "INVALID_INPUT",
      "quota ledger: source must list and head objects (usageSourceFromStore(store))",
    );
  }
}

/** `request`, when it is a well-formed {@link QuotaReservationRequest}; INVALID_INPUT otherwise. */
export function checkQuotaReservationRequest(request: unknown): QuotaReservationRequest {
  if (typeof request !== "object" || request === null) {
    throw new StowageError(
      "INVALID_INPUT",
      `quota reservation must be an object, got ${describeValue(request)}`,
    );
  }
  const { scope, key, bytes, limitBytes, urlExpiresAt, source } = request as Record<string, unknown>;
  assertQuotaKey(scope, key);
  assertByteCount(bytes, "bytes");
  assertByteCount(limitBytes, "limitBytes");
  assertDate(urlExpiresAt, "urlExpiresAt");
  assertQuotaUsageSource(source);
  return request as QuotaReservationRequest;
}

/** `commit`, when it is a well-formed {@link QuotaCommit}; INVALID_INPUT otherwise. */
export function checkQuotaCommit(commit: unknown): QuotaCommit {
  if (typeof commit !== "object" || commit === null) {
    throw new StowageError("INVALID_INPUT", `quota commit must be an object, got ${describeValue(commit)}`);
  }
  const { scope, key, size } = commit as Record<string, unknown>;
  assertQuotaKey(scope, key);
  assertByteCount(size, "size");
  return commit as QuotaCommit;
}

/** A {@link QuotaListing} checked by {@link checkQuotaListing}: one entry per key, in a copied array. */
export interface CheckedQuotaListing {
  objects: { key: string; size: number }[];
  listedAt: Date;
}

/**
 * Checks a listing given to `reconcile` (INVALID_INPUT unless every key is under `scope` with a
 * byte count, and `listedAt` is a Date) and returns it with one entry per key, the last one
 * winning.
 */
export function checkQuotaListing(scope: unknown, listing: unknown): CheckedQuotaListing {
  assertQuotaScope(scope);
  if (typeof listing !== "object" || listing === null) {
    throw new StowageError("INVALID_INPUT", `quota listing must be an object, got ${describeValue(listing)}`);
  }
  const { objects, listedAt } = listing as Partial<QuotaListing>;
  assertDate(listedAt, "listedAt");
  if (typeof (objects as Iterable<unknown> | undefined)?.[Symbol.iterator] !== "function") {
    throw new StowageError(
      "INVALID_INPUT",
      `quota listing: objects must be iterable, got ${describeValue(objects)}`,
    );
  }
  const byKey = new Map<string, { key: string; size: number }>();
  for (const object of objects as Iterable<unknown>) {
    const { key, size } = (object ?? {}) as Record<string, unknown>;
    assertQuotaKey(scope, key);
    assertByteCount(size, "size");
    byKey.set(key, { key, size });
  }
  return { objects: [...byKey.values()], listedAt: new Date(listedAt.getTime()) };
}
