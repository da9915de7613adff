import { mapConcurrent } from "@stowage/core";
import type { QuotaUsageSource } from "@stowage/uploads";
import { sql } from "drizzle-orm";
import { rowsOf } from "../database.js";
import { runDatabase } from "../run-database.js";
import { applySizes, type Executor } from "./quota-objects.js";
import { changeScope, type QuotaContext } from "./quota-scope.js";

/** HEAD requests in flight while settling reservations. */
const HEAD_CONCURRENCY = 8;

/** HEADs `keys`: what each holds now (null: nothing). */
async function headAll(keys: readonly string[], source: QuotaUsageSource, signal?: AbortSignal) {
  const heads = await mapConcurrent(
    keys,
    HEAD_CONCURRENCY,
    (key) => source.head(key, signal ? { signal } : {}),
    signal,
  );
  return keys.map((key, i) => ({ key, size: heads[i]?.size ?? null }));
}

/** HEADs `keys` and records what they hold, then runs `end` (if any), under the scope's lock. */
async function settle(
  quota: QuotaContext,
  context: string,
  scope: string,
  keys: readonly string[],
  source: QuotaUsageSource,
  signal: AbortSignal | undefined,
  end?: (tx: Executor) => Promise<unknown>,
): Promise<void> {
  const heads = await headAll(keys, source, signal);
  await changeScope(quota, context, signal, scope, async (tx) => {
    await applySizes(tx, scope, heads);
    await end?.(tx);
  });
}

/** Settles expired reservations of `keys`: what each key holds now counts, the reservation ends. */
export function settleExpired(
  quota: QuotaContext,
  scope: string,
  keys: string[],
  source: QuotaUsageSource,
  signal?: AbortSignal,
): Promise<void> {
  return settle(quota, `quota: settle expired reservations of ${scope}`, scope, keys, source, signal, (tx) =>
    // Only reservations still expired: one renewed meanwhile by a new URL stays.
    tx.execute(sql`
      DELETE FROM quota_reservations
      WHERE scope = ${scope} AND expires_at <= now()
        AND key IN (SELECT jsonb_array_elements_text(${JSON.stringify(keys)}::jsonb))`),
  );
}

/**
 * Records what the reserved keys hold now, so that uploads that already landed count as objects
 * rather than reservations. The reservations stay: a URL still valid may write its key again.
 */
export async function settleSeen(
  quota: QuotaContext,
  scope: string,
  source: QuotaUsageSource,
  signal?: AbortSignal,
): Promise<void> {
  const pending = rowsOf(
    await runDatabase(`quota: read reservations of ${scope}`, signal, () =>
      quota.db.execute(sql`SELECT key FROM quota_reservations WHERE scope = ${scope}`),
    ),
  ).map((row) => String(row.key));
  if (pending.length > 0)
    await settle(quota, `quota: see landed uploads of ${scope}`, scope, pending, source, signal);
}
