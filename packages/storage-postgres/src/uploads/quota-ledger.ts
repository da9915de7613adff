import { describeValue, type OperationOptions, StowageError } from "@stowage/core";
import {
  type CheckedQuotaListing,
  defineQuotaLedger,
  type QuotaCommit,
  type QuotaLedger,
  type QuotaUsage,
  type QuotaUsageSource,
} from "@stowage/uploads";
import { sql } from "drizzle-orm";
import { assertDatabase, rowsOf, type StowageDatabase } from "../database.js";
import { runDatabase } from "../run-database.js";
import { readFigures } from "./quota-figures.js";
import { applyListing, applySizes, lockScope } from "./quota-objects.js";
import { reserveQuota } from "./quota-reserve.js";
import { changeScope, loadScope, MAX_ROUNDS, type QuotaContext, tooBusy } from "./quota-scope.js";
import { settleExpired } from "./quota-settle.js";

/** How long a reservation outlives its URL when `reservationGraceMs` is not given: 10 minutes. */
const DEFAULT_RESERVATION_GRACE_MS = 10 * 60 * 1000;
/**
 * How long before a listing's `listedAt` a record still outlives the listing. `listedAt` is the
 * caller's clock and records are stamped by the database's; keeping a record the listing would
 * have replaced is always safe (the next listing settles it), replacing one that landed while the
 * listing ran is not, so the allowance covers clocks that disagree by up to this much.
 */
const LISTING_CLOCK_ALLOWANCE_MS = 30_000;

/** Options of {@link createPostgresQuotaLedger}. */
export interface PostgresQuotaLedgerOptions {
  /** A database with Stowage's tables (`quota_scopes`, `quota_objects`, `quota_reservations`). */
  db: StowageDatabase;
  /**
   * How long a reservation outlives its URL's expiry: S3 checks expiry when an upload starts,
   * so an upload begun just before can land this much later. Default 10 minutes.
   */
  reservationGraceMs?: number;
}

function contextOf(options: PostgresQuotaLedgerOptions): QuotaContext {
  const db = assertDatabase(options?.db, "createPostgresQuotaLedger");
  const graceMs = options.reservationGraceMs ?? DEFAULT_RESERVATION_GRACE_MS;
  if (!Number.isSafeInteger(graceMs) || graceMs < 0) {
    throw new StowageError(
      "INVALID_INPUT",
      `createPostgresQuotaLedger: reservationGraceMs must be a non-negative integer, got ${describeValue(graceMs)}`,
    );
  }
  return { db, graceMs };
}

/** A verified upload: the key holds `size`. Its reservation stays until its URLs expire. */
function commit(quota: QuotaContext, { scope, key, size }: QuotaCommit, { signal }: OperationOptions) {
  return changeScope(quota, `quota: commit ${key}`, signal, scope, (tx) =>
    applySizes(tx, scope, [{ key, size }]),
  );
}

/** The key holds nothing now; a reservation stays, since its URL may still be used until it expires. */
function forget(quota: QuotaContext, scope: string, key: string, { signal }: OperationOptions) {
  return changeScope(quota, `quota: forget ${key}`, signal, scope, (tx) =>
    applySizes(tx, scope, [{ key, size: null }]),
  );
}

/** A listing's findings replace the scope's objects, except rows recorded since it (less 30 s). */
function reconcile(
  { db }: QuotaContext,
  scope: string,
  { objects, listedAt }: CheckedQuotaListing,
  { signal }: OperationOptions,
) {
  const keepSince = new Date(listedAt.getTime() - LISTING_CLOCK_ALLOWANCE_MS);
  return runDatabase(`quota: reconcile ${scope}`, signal, () =>
    db.transaction(async (tx) => {
      await tx.execute(
        sql`INSERT INTO quota_scopes (scope) VALUES (${scope}) ON CONFLICT (scope) DO NOTHING`,
      );
      const locked = await lockScope(tx, scope);
      // A listing that started before the latest applied one saw less than it did.
      if (locked?.listedAt && listedAt < locked.listedAt) return;
      await applyListing(tx, scope, { objects, listedAt, keepSince });
    }),
  );
}

/** The scope's usage, listing it first on its first use and settling expired reservations. */
async function usage(
  quota: QuotaContext,
  scope: string,
  source: QuotaUsageSource,
  { signal }: OperationOptions,
): Promise<QuotaUsage> {
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const figures = await readFigures(quota, scope, signal);
    if (!figures) await loadScope(quota, scope, source, signal);
    else if (figures.expired.length > 0) await settleExpired(quota, scope, figures.expired, source, signal);
    else return figures.usage;
  }
  throw tooBusy(scope);
}

/**
 * The session's uploads are being deleted: every reservation of the scope ends and its revocation
 * count goes up, under the scope's lock. A scope without a row never had a reservation (the first
 * one lists it and makes the row): there is no URL of it to revoke.
 */
function revoke(quota: QuotaContext, scope: string, { signal }: OperationOptions) {
  return changeScope(quota, `quota: revoke ${scope}`, signal, scope, async (tx) => {
    await tx.execute(sql`DELETE FROM quota_reservations WHERE scope = ${scope}`);
    await tx.execute(sql`UPDATE quota_scopes SET revocations = revocations + 1 WHERE scope = ${scope}`);
  });
}

/** How many times the scope's upload URLs were revoked; 0 for a scope without a row. */
async function revocations({ db }: QuotaContext, scope: string, { signal }: OperationOptions) {
  const [row] = rowsOf(
    await runDatabase(`quota: revocations of ${scope}`, signal, () =>
      db.execute(sql`SELECT revocations FROM quota_scopes WHERE scope = ${scope}`),
    ),
  );
  return row ? Number(row.revocations) : 0;
}

/**
 * The uploads `QuotaLedger` on PostgreSQL (or PGlite), shared by every process on the database.
 * One row per scope (`quota_scopes`: bytes and objects) is locked by every change to the scope;
 * what each key holds is in `quota_objects`, the open reservations in `quota_reservations`. A
 * reservation is one round trip (the `stowage_quota_reserve` function checks and records under
 * the row lock), so two processes can never together pass a limit. Nothing is cached in the
 * process: every call reads the rows.
 *
 * The first use of a scope lists the source; after that the rows change through `reserve`,
 * `commit`, `forget`, `reconcile` and the settling of reservations: one past its URL's expiry
 * plus grace is settled by a HEAD of its key (what the key holds then counts, nothing more);
 * near the limit, HEADs of the reserved keys record what already landed. A reservation ends only
 * at that expiry (or its `release`): commits and deletions leave it, since a URL still valid may
 * write its key again, and until then the key counts as the larger of what it holds and what was
 * reserved.
 *
 * Each key's row carries when a commit, forget or HEAD last recorded it (`changed_at`, the
 * database's clock; a forgotten key keeps a row with no size). `reconcile` keeps the rows
 * recorded at or after the listing's `listedAt` less 30 s, for clocks that disagree: a commit
 * from another process while the listing ran is never undone by it. Every input is checked by
 * `defineQuotaLedger` before any of this runs.
 */
export function createPostgresQuotaLedger(options: PostgresQuotaLedgerOptions): QuotaLedger {
  const quota = contextOf(options);
  return defineQuotaLedger({
    reserve: (request, op) => reserveQuota(quota, request, op),
    commit: (checked, op) => commit(quota, checked, op),
    forget: (scope, key, op) => forget(quota, scope, key, op),
    reconcile: (scope, listing, op) => reconcile(quota, scope, listing, op),
    usage: (scope, source, op) => usage(quota, scope, source, op),
    revoke: (scope, op) => revoke(quota, scope, op),
    revocations: (scope, op) => revocations(quota, scope, op),
  });
}
