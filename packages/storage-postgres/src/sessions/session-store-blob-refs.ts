import { BLOB_REF_PREFIX, throwIfAborted } from "@stowage/core";
import { sql } from "drizzle-orm";
import { assertDatabase, rowsOf, type StowageDatabase } from "../database.js";
import { runDatabase } from "../run-database.js";
import { sessionStoreEntries as entries, sessionStoreTrashEntries as trashEntries } from "../schema.js";

/** Entry rows read per query: a page of entries whose images moved is small once they did. */
const PAGE_ROWS = 500;
const REF = /blob:sha256:([a-f0-9]{64})/g;

/** Options of {@link scanSessionStoreForBlobRefs}. */
export interface ScanSessionStoreOptions {
  signal?: AbortSignal;
}

/**
 * Yields the hash of every `blob:sha256:` ref in the SessionStore's entry rows of `database` (the
 * one given to `createPostgresSessionStore`; every session of every project, and every transcript
 * in its trash), a page of rows at a
 * time in id order: a root source for blob-store's `collectGarbage`, so that it keeps every image
 * and document a `load` will read back. A query that fails is thrown, so a collection fed by it
 * stops instead of missing refs.
 */
export async function* scanSessionStoreForBlobRefs(
  database: StowageDatabase,
  options: ScanSessionStoreOptions = {},
): AsyncGenerator<string> {
  const db = assertDatabase(database, "scanSessionStoreForBlobRefs");
  const { signal } = options;
  // The live entries, then those of trashed transcripts: a restore must find their blobs.
  for (const table of [entries, trashEntries]) {
    let after = 0;
    for (;;) {
      throwIfAborted(signal, "scan of the session store for blob refs");
      const rows = await runDatabase("session store scan for blob refs", signal, async () =>
        rowsOf(
          await db.execute(sql`
            SELECT id, entry FROM ${table}
            WHERE id > ${after} AND strpos(entry, ${BLOB_REF_PREFIX}) > 0
            ORDER BY id LIMIT ${PAGE_ROWS}`),
        ),
      );
      for (const row of rows) for (const match of (row.entry as string).matchAll(REF)) yield match[1]!;
      if (rows.length < PAGE_ROWS) break;
      after = Number(rows[rows.length - 1]!.id);
    }
  }
}
