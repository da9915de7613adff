import type { OperationOptions } from "@stowage/core";
import type {
  QuotaCommit,
  QuotaLedger,
  QuotaReservation,
  QuotaReservationRequest,
  QuotaUsage,
  QuotaUsageSource,
} from "./quota-ledger.js";
import {
  assertQuotaKey,
  assertQuotaScope,
  assertQuotaUsageSource,
  type CheckedQuotaListing,
  checkQuotaCommit,
  checkQuotaListing,
  checkQuotaReservationRequest,
} from "./quota-ledger-input.js";

/**
 * What a quota ledger implements: {@link QuotaLedger}'s methods, each called by
 * {@link defineQuotaLedger} only with input it checked, and always with options.
 */
export interface QuotaLedgerDriver {
  /** Throws `quotaExceededError(request, usage)` when the request does not fit. */
  reserve(request: QuotaReservationRequest, options: OperationOptions): Promise<QuotaReservation>;
  commit(commit: QuotaCommit, options: OperationOptions): Promise<void>;
  forget(scope: string, key: string, options: OperationOptions): Promise<void>;
  /** `listing` has one entry per key (the last one won) in an array of its own. */
  reconcile(scope: string, listing: CheckedQuotaListing, options: OperationOptions): Promise<void>;
  usage(scope: string, source: QuotaUsageSource, options: OperationOptions): Promise<QuotaUsage>;
  revoke(scope: string, options: OperationOptions): Promise<void>;
  revocations(scope: string, options: OperationOptions): Promise<number>;
}

/**
 * `run()`'s promise, or a rejected one when it throws: the checks throw before the driver is
 * called, and a caller of a ledger always gets a promise. (Not an async function: a reservation
 * is the hot path, and this adds no promise of its own.)
 */
function checked<T>(run: () => Promise<T>): Promise<T> {
  try {
    return run();
  } catch (err) {
    return Promise.reject(err);
  }
}

/**
 * A {@link QuotaLedger} over `driver`: every input is checked before the driver sees it (scopes
 * and keys are safe, keys strictly under their scope, sizes non-negative safe integers, dates
 * valid, sources able to list and head), so that every ledger refuses the same input with
 * INVALID_INPUT and stores nothing. Run `describeQuotaLedgerConformance` of
 * `@stowage/uploads/testing` against the result.
 */
export function defineQuotaLedger(driver: QuotaLedgerDriver): QuotaLedger {
  return {
    reserve: (request, options = {}) =>
      checked(() => driver.reserve(checkQuotaReservationRequest(request), options)),
    commit: (commit, options = {}) => checked(() => driver.commit(checkQuotaCommit(commit), options)),
    forget: (scope, key, options = {}) =>
      checked(() => {
        assertQuotaKey(scope, key);
        return driver.forget(scope, key, options);
      }),
    reconcile: (scope, listing, options = {}) =>
      checked(() => driver.reconcile(scope, checkQuotaListing(scope, listing), options)),
    usage: (scope, source, options = {}) =>
      checked(() => {
        assertQuotaScope(scope);
        assertQuotaUsageSource(source);
        return driver.usage(scope, source, options);
      }),
    revoke: (scope, options = {}) =>
      checked(() => {
        assertQuotaScope(scope);
        return driver.revoke(scope, options);
      }),
    revocations: (scope, options = {}) =>
      checked(() => {
        assertQuotaScope(scope);
        return driver.revocations(scope, options);
      }),
  };
}
