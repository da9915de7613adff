import { randomUUID } from "node:crypto";
import type { OperationOptions } from "@stowage/core";
import { type QuotaReservation, type QuotaReservationRequest, quotaExceededError } from "@stowage/uploads";
import { sql } from "drizzle-orm";
import { rowsOf } from "../database.js";
import { runDatabase } from "../run-database.js";
import { figuresOf } from "./quota-figures.js";
import { changeScope, loadScope, MAX_ROUNDS, type QuotaContext, tooBusy } from "./quota-scope.js";
import { settleExpired, settleSeen } from "./quota-settle.js";

/**
 * Reserves room for one upload URL: one call of `stowage_quota_reserve`, which checks and records
 * under the scope's row lock. Its outcome says what to do first when it did not grant: list the
 * scope (its first use), settle expired reservations, or, once, look at what the reserved keys
 * already hold before saying QUOTA_EXCEEDED.
 */
export async function reserveQuota(
  quota: QuotaContext,
  request: QuotaReservationRequest,
  { signal }: OperationOptions,
): Promise<QuotaReservation> {
  const { scope, key, bytes, limitBytes, urlExpiresAt, source } = request;
  const token = randomUUID();
  const expiresAt = new Date(urlExpiresAt.getTime() + quota.graceMs).toISOString();
  let seenChecked = false;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const [row] = rowsOf(
      await runDatabase(`quota: reserve ${key}`, signal, () =>
        quota.db.execute(
          sql`SELECT * FROM stowage_quota_reserve(${scope}, ${key}, ${bytes}, ${limitBytes}, ${expiresAt}::timestamptz, ${token})`,
        ),
      ),
    );
    const outcome = row?.outcome;
    if (outcome === "unlisted") {
      await loadScope(quota, scope, source, signal);
    } else if (outcome === "expired") {
      await settleExpired(quota, scope, figuresOf(row!).expired, source, signal);
    } else if (outcome === "exceeded") {
      // Even with nothing pending, a HEAD may find a reserved key now holding less than recorded.
      if (seenChecked) throw quotaExceededError(request, figuresOf(row!).usage);
      seenChecked = true;
      await settleSeen(quota, scope, source, signal);
    } else {
      return granted(quota, request, token, row!);
    }
  }
  throw tooBusy(scope);
}

/** The reservation `stowage_quota_reserve` granted, with the usage it counted. */
function granted(
  quota: QuotaContext,
  { scope, key }: QuotaReservationRequest,
  token: string,
  row: Record<string, unknown>,
): QuotaReservation {
  // Only a reservation that stands for this URL alone is given back; one merged into a key's
  // reservation of another URL stays.
  const alone = row.granted_token === token;
  return {
    usage: figuresOf(row).usage,
    async release({ signal } = {}) {
      if (!alone) return;
      await changeScope(quota, `quota: release ${key}`, signal, scope, async (tx) => {
        await tx.execute(sql`
          DELETE FROM quota_reservations
          WHERE scope = ${scope} AND key = ${key} AND token = ${token} AND holders = 1`);
      });
    },
  };
}
