import type { QuotaUsage } from "@stowage/uploads";
import { sql } from "drizzle-orm";
import { rowsOf } from "../database.js";
import { runDatabase } from "../run-database.js";
import type { QuotaContext } from "./quota-scope.js";

/** A scope's figures as one statement read them, with the expired reservations to settle. */
export interface ScopeFigures {
  usage: QuotaUsage;
  expired: string[];
}

/** The figures of a row of `stowage_quota_reserve` or of {@link readFigures}' statement. */
export function figuresOf(row: Record<string, unknown>): ScopeFigures {
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
}

/** A scope's usage and expired reservations in one statement; undefined for a scope never listed. */
export async function readFigures(
  { db }: QuotaContext,
  scope: string,
  signal?: AbortSignal,
): Promise<ScopeFigures | undefined> {
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
