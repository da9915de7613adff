import type { SessionStoreEntry } from "@stowage/sessions";
import type { StoredSessionKey } from "@stowage/sessions/backend";
import { sql } from "drizzle-orm";
import { rowsOf } from "../database.js";
import { sqlStateOf } from "../database-errors.js";
import { sessionStoreEntries as entries, sessionStoreKeys as keys } from "../schema.js";
import {
  type BatchParameters,
  batchRows,
  type Executor,
  type KnownHead,
  type NextHead,
} from "./session-store-batch.js";
import { readSummary } from "./session-store-rows.js";

/**
 * A main transcript's append in one statement, its own transaction, when this store wrote the key
 * row last: the summary is folded in Node before the statement, over the whole batch, from the
 * summary and mtime this store last wrote, and the statement stores the rows and that summary only
 * if the key row still holds exactly those and no uuid of the batch is stored yet; else it changes
 * nothing and this returns undefined (the caller appends in a transaction that reads the row, as
 * for a retried batch, whose statement here ended in a unique violation, logged by the server).
 * One round trip instead of four (BEGIN, the rows, the summary, COMMIT): under load each one
 * waited for both processes to be scheduled again, and the batches of 100 lost most there.
 * Concurrent appenders stay safe: the UPDATE locks the key row and, when another append held it
 * first, re-reads the row after that one commits, whose mtime then differs.
 */
export async function appendAhead(
  db: Executor,
  stored: StoredSessionKey,
  batch: readonly SessionStoreEntry[],
  parameters: BatchParameters,
  known: KnownHead,
  nextHead: NextHead,
): Promise<KnownHead | undefined> {
  // mtime only moves forward, and every append moves it, so an unchanged mtime (with an unchanged
  // summary) means no other append came in between.
  const mtime = Math.max(Date.now(), known.mtime + 1);
  // The stored texts compare (a sealed summary is sealed afresh by every write); the plain one folds.
  const head = await nextHead(readSummary(stored, known.text), batch, mtime);
  let applied: Record<string, unknown> | undefined;
  try {
    [applied] = rowsOf(
      await db.execute(sql`
        WITH batch AS (${batchRows(parameters)}), head AS (
          UPDATE ${keys} SET mtime = ${mtime}, summary = ${head.summary}
          WHERE project_key = ${stored.projectKey} AND session_id = ${stored.sessionId} AND subpath = ''
            AND mtime = ${known.mtime} AND summary = ${known.summary}
          RETURNING mtime
        ), inserted AS (
          -- No ON CONFLICT: a uuid stored before (a retried batch) fails the whole statement, so
          -- nothing is stored with a summary that folded it again. The unique index checks it as
          -- it inserts; a lookup planned beside it read every row of the transcript at times.
          INSERT INTO ${entries} (project_key, session_id, subpath, uuid, entry)
          SELECT ${stored.projectKey}, ${stored.sessionId}, '', batch.uuid, batch.entry
          FROM batch CROSS JOIN head
          ORDER BY batch.position
          RETURNING 1
        )
        SELECT (SELECT count(*) FROM inserted) AS inserted FROM head`),
    );
  } catch (err) {
    // unique_violation: some entry of the batch is stored already, for the transaction to sort out.
    if (sqlStateOf(err) === "23505") return undefined;
    throw err;
  }
  return applied ? head : undefined;
}
