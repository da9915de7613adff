import { randomUUID } from "node:crypto";
import { describeValue, mapConcurrent, StowageError } from "@stowage/core";
import {
  defineQuotaLedger,
  type QuotaLedger,
  type QuotaUsage,
  type QuotaUsageSource,
  quotaExceededError,
} from "@stowage/uploads";
import { sql } from "drizzle-orm";
import { assertDatabase, rowsOf, type StowageDatabase } from "./database.js";
import { applyListing, applySizes, type Executor, lastPerKey, lockScope } from "./quota-objects.js";
import { runDatabase } from "./run-database.js";

/** How long a reservation outlives its URL when `reservationGraceMs` is not given: 10 minutes. */
export const DEFAULT_RESERVATION_GRACE_MS = 10 * 60 * 1000;
/** HEAD requests in flight while settling reservations. */
const HEAD_CONCURRENCY = 8;
/**
 * Rounds of settle-then-retry one call may take before giving up with CONFLICT: each round
 * makes progress (a listing, expired reservations settled), so more means a scope under siege.
 */
const MAX_ROUNDS = 8;
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
   * so an upload begun just before can land this much later. Default {@link DEFAULT_RESERVATION_GRACE_MS}.
   */
  reservationGraceMs?: number;
}

/** A scope's figures as one statement read them, with the expired reservations to settle. */
interface ScopeFigures {
  usage: QuotaUsage;
  expired: string[];
}

const figuresOf = (row: Record<string, unknown>): ScopeFigures => {
  const usedBytes = Number(row.used);
  const pendingBytes = Number(row.pending);
  return {
    usage: {
      usedBytes,
      pendingBytes,
      totalBytes: usedBytes + pendingBytes,
      objects: Number(row.objects),
      pendingUploads: Number(row.uploads),
    },
    expired: (row.expired as string[] | null) ?? [],
  };
};

const tooBusy = (scope: string) =>
  new StowageError("CONFLICT", `quota ledger: scope ${describeValue(scope)} kept changing; try again`);

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
 * from another process while the listing ran is never undone by it.
 */
export function createPostgresQuotaLedger(options: PostgresQuotaLedgerOptions): QuotaLedger {
  const db = assertDatabase(options?.db, "createPostgresQuotaLedger");
  const graceMs = options.reservationGraceMs ?? DEFAULT_RESERVATION_GRACE_MS;
  if (!Number.isSafeInteger(graceMs) || graceMs < 0) {
    throw new StowageError(
      "INVALID_INPUT",
      `createPostgresQuotaLedger: reservationGraceMs must be a non-negative integer, got ${describeValue(graceMs)}`,
    );
  }

  /** Lists a scope on its first use; a listing another process finished first stands. */
  async function load(scope: string, source: QuotaUsageSource, signal?: AbortSignal): Promise<void> {
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

  /** One locked change to a scope that has a row; a scope never listed has nothing to change. */
  const change = (
    context: string,
    signal: AbortSignal | undefined,
    scope: string,
    action: (tx: Executor) => Promise<void>,
  ) =>
    runDatabase(context, signal, () =>
      db.transaction(async (tx) => {
        if (await lockScope(tx, scope)) await action(tx);
      }),
    );

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
    context: string,
    scope: string,
    keys: readonly string[],
    source: QuotaUsageSource,
    signal: AbortSignal | undefined,
    end?: (tx: Executor) => Promise<unknown>,
  ) {
    const heads = await headAll(keys, source, signal);
    await change(context, signal, scope, async (tx) => {
      await applySizes(
        tx,
        scope,
        heads.map(({ key, size }) => ({ key, size })),
      );
      await end?.(tx);
    });
  }

  /** Settles expired reservations of `keys`: what each key holds now counts, the reservation ends. */
  const settleExpired = (scope: string, keys: string[], source: QuotaUsageSource, signal?: AbortSignal) =>
    settle(`quota: settle expired reservations of ${scope}`, scope, keys, source, signal, (tx) =>
      // Only reservations still expired: one renewed meanwhile by a new URL stays.
      tx.execute(sql`
        DELETE FROM quota_reservations
        WHERE scope = ${scope} AND expires_at <= now()
          AND key IN (SELECT jsonb_array_elements_text(${JSON.stringify(keys)}::jsonb))`),
    );

  /**
   * Records what the reserved keys hold now, so that uploads that already landed count as objects
   * rather than reservations. The reservations stay: a URL still valid may write its key again.
   */
  async function settleSeen(scope: string, source: QuotaUsageSource, signal?: AbortSignal) {
    const pending = rowsOf(
      await runDatabase(`quota: read reservations of ${scope}`, signal, () =>
        db.execute(sql`SELECT key FROM quota_reservations WHERE scope = ${scope}`),
      ),
    ).map((row) => String(row.key));
    if (pending.length > 0)
      await settle(`quota: see landed uploads of ${scope}`, scope, pending, source, signal);
  }

  async function readFigures(scope: string, signal?: AbortSignal): Promise<ScopeFigures | undefined> {
    const [row] = rowsOf(
      await runDatabase(`quota: usage of ${scope}`, signal, () =>
        db.execute(sql`
          SELECT s.used_bytes AS used, s.object_count AS objects,
            (SELECT coalesce(sum(greatest(r.bytes - coalesce(o.size, 0), 0)), 0)
              FROM quota_reservations r
              LEFT JOIN quota_objects o ON o.scope = r.scope AND o.key = r.key
              WHERE r.scope = s.scope) AS pending,
            (SELECT count(*) FROM quota_reservations r
              LEFT JOIN quota_objects o ON o.scope = r.scope AND o.key = r.key
              WHERE r.scope = s.scope AND r.bytes > coalesce(o.size, 0)) AS uploads,
            (SELECT array_agg(r.key) FROM quota_reservations r
              WHERE r.scope = s.scope AND r.expires_at <= now()) AS expired
          FROM quota_scopes s WHERE s.scope = ${scope}`),
      ),
    );
    return row ? figuresOf(row) : undefined;
  }

  // Every input is checked by defineQuotaLedger before any of this runs.
  return defineQuotaLedger({
    async reserve(request, { signal } = {}) {
      const { scope, key, bytes, limitBytes, urlExpiresAt, source } = request;
      const token = randomUUID();
      const expiresAt = new Date(urlExpiresAt.getTime() + graceMs).toISOString();
      let seenChecked = false;
      for (let round = 0; round < MAX_ROUNDS; round++) {
        const [row] = rowsOf(
          await runDatabase(`quota: reserve ${key}`, signal, () =>
            db.execute(
              sql`SELECT * FROM stowage_quota_reserve(${scope}, ${key}, ${bytes}, ${limitBytes}, ${expiresAt}::timestamptz, ${token})`,
            ),
          ),
        );
        const outcome = row?.outcome;
        if (outcome === "unlisted") {
          await load(scope, source, signal);
        } else if (outcome === "expired") {
          await settleExpired(scope, figuresOf(row!).expired, source, signal);
        } else if (outcome === "exceeded") {
          // Even with nothing pending, a HEAD may find a reserved key now holding less than recorded.
          if (seenChecked) throw quotaExceededError(request, figuresOf(row!).usage);
          seenChecked = true;
          await settleSeen(scope, source, signal);
        } else {
          const granted = row?.granted_token === token;
          return {
            usage: figuresOf(row!).usage,
            async release({ signal: releaseSignal } = {}) {
              // Only a reservation that still stands for this URL alone is given back; a merged one stays.
              if (!granted) return;
              await change(`quota: release ${key}`, releaseSignal, scope, async (tx) => {
                await tx.execute(sql`
                  DELETE FROM quota_reservations
                  WHERE scope = ${scope} AND key = ${key} AND token = ${token} AND holders = 1`);
              });
            },
          };
        }
      }
      throw tooBusy(scope);
    },

    async commit(commit, { signal } = {}) {
      const { scope, key, size } = commit;
      await change(`quota: commit ${key}`, signal, scope, async (tx) => {
        // The reservation stays until its URLs expire: another URL for the key, or the same one
        // again, may still write up to the reserved size.
        await applySizes(tx, scope, [{ key, size }]);
      });
    },

    async forget(scope, key, { signal } = {}) {
      // A reservation stays: its URL may still be used until it expires.
      await change(`quota: forget ${key}`, signal, scope, (tx) =>
        applySizes(tx, scope, [{ key, size: null }]),
      );
    },

    async reconcile(scope, listing, { signal } = {}) {
      const { objects, listedAt } = listing;
      const keepSince = new Date(listedAt.getTime() - LISTING_CLOCK_ALLOWANCE_MS);
      await runDatabase(`quota: reconcile ${scope}`, signal, () =>
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
    },

    async usage(scope, source, { signal } = {}) {
      for (let round = 0; round < MAX_ROUNDS; round++) {
        const figures = await readFigures(scope, signal);
        if (!figures) await load(scope, source, signal);
        else if (figures.expired.length > 0) await settleExpired(scope, figures.expired, source, signal);
        else return figures.usage;
      }
      throw tooBusy(scope);
    },

    async revoke(scope, { signal } = {}) {
      // A scope without a row never had a reservation (the first one lists it and makes the row):
      // there is no URL of it to revoke.
      await change(`quota: revoke ${scope}`, signal, scope, async (tx) => {
        await tx.execute(sql`DELETE FROM quota_reservations WHERE scope = ${scope}`);
        await tx.execute(sql`UPDATE quota_scopes SET revocations = revocations + 1 WHERE scope = ${scope}`);
      });
    },

    async revocations(scope, { signal } = {}) {
      const [row] = rowsOf(
        await runDatabase(`quota: revocations of ${scope}`, signal, () =>
          db.execute(sql`SELECT revocations FROM quota_scopes WHERE scope = ${scope}`),
        ),
      );
      return row ? Number(row.revocations) : 0;
    },
  });
}
