import { sql } from "drizzle-orm";
import { rowsOf, type StowageDatabase } from "../database.js";

/** A statement runner: the database or a transaction on it. */
export type Executor = Pick<StowageDatabase, "execute">;

/** Objects per INSERT when a listing is written: a bounded parameter whatever the scope holds. */
const INSERT_CHUNK = 5000;

/** What a key holds now; `null`: nothing (deleted, or a HEAD found no object). */
export interface KeySize {
  key: string;
  size: number | null;
}

/** `entries` with one entry per key, the last one winning. */
export function lastPerKey<T extends { key: string }>(entries: Iterable<T>): T[] {
  const byKey = new Map<string, T>();
  for (const entry of entries) byKey.set(entry.key, entry);
  return [...byKey.values()];
}

/**
 * Locks a scope's row for the rest of the transaction, serializing it with every other change
 * to the scope. Returns when the latest listing applied to it started (`listedAt` null: none
 * recorded), or undefined when the scope has no row (never listed).
 */
export async function lockScope(tx: Executor, scope: string): Promise<{ listedAt: Date | null } | undefined> {
  const [row] = rowsOf(
    await tx.execute(sql`SELECT listed_at FROM quota_scopes WHERE scope = ${scope} FOR UPDATE`),
  );
  if (!row) return undefined;
  return { listedAt: row.listed_at === null ? null : new Date(row.listed_at as string | Date) };
}

/**
 * Records what keys hold now, stamped with the database's clock (a key that holds nothing keeps
 * a row with `size` NULL, so that a listing that saw it before cannot bring it back), and moves
 * the scope's totals by the difference, in one statement. The caller holds the scope's lock;
 * `entries` has one entry per key.
 */
export async function applySizes(tx: Executor, scope: string, entries: readonly KeySize[]): Promise<void> {
  if (entries.length === 0) return;
  const input = JSON.stringify(entries);
  await tx.execute(sql`
    WITH input AS (
      SELECT x.key, x.size FROM jsonb_to_recordset(${input}::jsonb) AS x(key text, size bigint)
    ), previous AS (
      SELECT o.size FROM quota_objects o JOIN input i ON o.key = i.key WHERE o.scope = ${scope}
    ), written AS (
      INSERT INTO quota_objects (scope, key, size, changed_at)
      SELECT ${scope}, i.key, i.size, now() FROM input i
      ON CONFLICT (scope, key) DO UPDATE SET size = excluded.size, changed_at = excluded.changed_at
    )
    UPDATE quota_scopes SET
      used_bytes = used_bytes
        + (SELECT coalesce(sum(size), 0) FROM input)
        - (SELECT coalesce(sum(size), 0) FROM previous),
      object_count = object_count
        + (SELECT count(size) FROM input)
        - (SELECT count(size) FROM previous)
    WHERE scope = ${scope}`);
}

/**
 * Replaces a scope's objects with what a listing that started at `listedAt` found (one entry per
 * key), except keys recorded at or after `keepSince` (none when null), which keep their record;
 * then sets the scope's totals and listing time. The caller holds the scope's lock or has just
 * created its row.
 */
export async function applyListing(
  tx: Executor,
  scope: string,
  listing: { objects: readonly { key: string; size: number }[]; listedAt: Date; keepSince: Date | null },
): Promise<void> {
  const { objects, listedAt, keepSince } = listing;
  // Rows the listing supersedes go, forgotten keys' rows included; the rest are newer than it.
  await tx.execute(
    keepSince
      ? sql`DELETE FROM quota_objects WHERE scope = ${scope}
          AND (changed_at IS NULL OR changed_at < ${keepSince.toISOString()}::timestamptz)`
      : sql`DELETE FROM quota_objects WHERE scope = ${scope}`,
  );
  for (let start = 0; start < objects.length; start += INSERT_CHUNK) {
    const chunk = JSON.stringify(objects.slice(start, start + INSERT_CHUNK));
    await tx.execute(sql`
      INSERT INTO quota_objects (scope, key, size)
      SELECT ${scope}, x.key, x.size FROM jsonb_to_recordset(${chunk}::jsonb) AS x(key text, size bigint)
      ON CONFLICT (scope, key) DO NOTHING`);
  }
  await tx.execute(sql`
    UPDATE quota_scopes SET
      used_bytes = (SELECT coalesce(sum(size), 0) FROM quota_objects WHERE scope = ${scope}),
      object_count = (SELECT count(size) FROM quota_objects WHERE scope = ${scope}),
      listed_at = ${listedAt.toISOString()}::timestamptz
    WHERE scope = ${scope}`);
}
