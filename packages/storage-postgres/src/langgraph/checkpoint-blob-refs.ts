import { BLOB_REF_PREFIX, throwIfAborted } from "@stowage/core";
import { sql } from "drizzle-orm";
import { assertDatabase, rowsOf, type StowageDatabase } from "../database.js";
import { runDatabase } from "../run-database.js";
import { langgraphCheckpoints, langgraphValues, langgraphWrites } from "../schema.js";

/** Options of {@link scanCheckpointTablesForBlobRefs}. */
export interface ScanCheckpointTablesOptions {
  signal?: AbortSignal;
}

const REF_BYTES = Buffer.from(BLOB_REF_PREFIX).toString("hex");

/** The distinct hashes of the `blob:sha256:` refs in one bytea column (`encode(…, 'escape')` keeps ASCII as it is). */
function refsIn(
  table: typeof langgraphValues | typeof langgraphWrites | typeof langgraphCheckpoints,
  column: string,
) {
  const value = sql.identifier(column);
  return sql`
    SELECT DISTINCT m[1] AS hash FROM (
      SELECT regexp_matches(encode(${value}, 'escape'), 'blob:sha256:([a-f0-9]{64})', 'g') AS m
      FROM ${table} WHERE position(decode(${REF_BYTES}, 'hex') in ${value}) > 0) refs`;
}

/**
 * Yields the hash of every `blob:sha256:` ref held in the `langgraph_*` tables of `database` (every
 * namespace: the savers `createPostgresCheckpointSaver` made with `blobs`): channel values, pending
 * writes and checkpoints. A root source for blob-store's `collectGarbage`, so that it keeps every
 * image and binary value a `getTuple` will read back; without it a collection deletes them. A
 * query that fails is thrown, so a collection fed by it stops instead of missing refs.
 */
export async function* scanCheckpointTablesForBlobRefs(
  database: StowageDatabase,
  options: ScanCheckpointTablesOptions = {},
): AsyncGenerator<string> {
  const db = assertDatabase(database, "scanCheckpointTablesForBlobRefs");
  const columns = [
    [langgraphValues, "value"],
    [langgraphWrites, "value"],
    [langgraphCheckpoints, "checkpoint"],
  ] as const;
  for (const [table, column] of columns) {
    throwIfAborted(options.signal, "scan of the LangGraph tables for blob refs");
    const rows = await runDatabase("LangGraph tables scan for blob refs", options.signal, async () =>
      rowsOf(await db.execute(refsIn(table, column))),
    );
    for (const row of rows) yield row.hash as string;
  }
}
