import { describeValue, StowageError } from "@stowage/core";
import type { QuotaUsageSource } from "@stowage/uploads";
import { sql } from "drizzle-orm";
import { rowsOf, type StowageDatabase } from "../database.js";
import { runDatabase } from "../run-database.js";
import { applyListing, type Executor, lastPerKey, lockScope } from "./quota-objects.js";

/** What every operation of one PostgreSQL quota ledger works with: its options, checked. */
export interface QuotaContext {
  db: StowageDatabase;
  /** How long a reservation outlives its URL's expiry, in ms. */
  graceMs: number;
}

/**
 * Rounds of settle-then-retry one call may take before giving up with CONFLICT: each round
 * makes progress (a listing, expired reservations settled), so more means a scope under siege.
 */
export const MAX_ROUNDS = 8;

/** CONFLICT: a scope that kept changing for {@link MAX_ROUNDS} rounds. */
export const tooBusy = (scope: string) =>
  new StowageError("CONFLICT", `quota ledger: scope ${describeValue(scope)} kept changing; try again`);

/** One locked change to a scope that has a row; a scope never listed has nothing to change. */
export function changeScope(
  { db }: QuotaContext,
  context: string,
  signal: AbortSignal | undefined,
  scope: string,
  action: (tx: Executor) => Promise<void>,
): Promise<void> {
  return runDatabase(context, signal, () =>
    db.transaction(async (tx) => {
      if (await lockScope(tx, scope)) await action(tx);
    }),
  );
}

/** Lists a scope on its first use; a listing another process finished first stands. */
export async function loadScope(
  { db }: QuotaContext,
  scope: string,
  source: QuotaUsageSource,
  signal?: AbortSignal,
): Promise<void> {
  const listedAt = new Date();
  const listed: { key: string; size: number }[] = [];
  for await (const item of source.list(scope, signal ? { signal } : {})) {
    listed.push({ key: item.key, size: item.size });
  }
  const objects = lastPerKey(listed);
  await runDatabase(`quota: list ${scope}`, signal, () =>
    db.transaction(async (tx) => {
      const created = rowsOf(
        await tx.execute(
          sql`INSERT INTO quota_scopes (scope) VALUES (${scope}) ON CONFLICT (scope) DO NOTHING RETURNING 1 AS created`,
        ),
      );
      // Nothing of a scope without a row is recorded: the listing is the whole truth.
      if (created.length > 0) await applyListing(tx, scope, { objects, listedAt, keepSince: null });
    }),
  );
}
