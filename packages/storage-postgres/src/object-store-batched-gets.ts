import DataLoader from "dataloader";
import { and, eq, inArray } from "drizzle-orm";
import { plainBytes } from "./database.js";
import type { ObjectStoreContext } from "./object-store-context.js";
import { blobs } from "./schema.js";

/**
 * Gets asked for in the same turn of the event loop, read in one statement. A reader that fetches
 * many objects at once (a SessionStore load putting 20 screenshots back, 16 at a time) paid a round
 * trip per object: on PostgreSQL 15 here, 20 gets of 115 KB took 96 ms one statement each and 32 ms
 * as one. Nothing is cached: every get reads the row as it is when its statement runs.
 */
const MAX_KEYS_PER_STATEMENT = 16;

export type BatchedGet = (key: string) => Promise<Uint8Array | null>;

export function batchedGets(context: ObjectStoreContext): BatchedGet {
  const loader = new DataLoader<string, Uint8Array | null>(
    async (keys) => {
      const rows = await context.db
        .select({ key: blobs.key, body: blobs.body })
        .from(blobs)
        .where(and(eq(blobs.namespace, context.namespace), inArray(blobs.key, [...new Set(keys)])));
      const found = new Map(rows.map((row) => [row.key, plainBytes(row.body)]));
      // A key asked for twice in one batch: each caller gets bytes of its own.
      const given = new Set<string>();
      return keys.map((key) => {
        const bytes = found.get(key) ?? null;
        if (bytes === null) return null;
        if (given.has(key)) return bytes.slice();
        given.add(key);
        return bytes;
      });
    },
    { cache: false, maxBatchSize: MAX_KEYS_PER_STATEMENT },
  );
  return (key) => loader.load(key);
}
