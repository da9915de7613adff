import { describeValue } from "./describe-value.js";
import { StowageError } from "./errors.js";

/** Days a deletion keeps what it deleted, restorable, when neither the call nor its owner says. */
const DEFAULT_TRASH_DAYS = 7;
/** The most days anything is kept in a trash: an audit of deletions (400 days) outlives it. */
const MAX_TRASH_DAYS = 365;

/**
 * The days a deletion keeps what it deleted in a trash: `given` (the call's), else `fallback`
 * (the store's or deployment's), else 7; `0` deletes at once. INVALID_INPUT unless a number from
 * 0 to 365. One rule for every trash of Stowage (a deployment's, a SessionStore's).
 */
export function trashDaysOf(given: unknown, fallback?: unknown): number {
  const days = given ?? fallback ?? DEFAULT_TRASH_DAYS;
  if (typeof days !== "number" || !Number.isFinite(days) || days < 0 || days > MAX_TRASH_DAYS) {
    throw new StowageError(
      "INVALID_INPUT",
      `trashDays must be a number of days from 0 (delete now) to ${MAX_TRASH_DAYS}, got ${describeValue(days)}`,
    );
  }
  return days;
}
