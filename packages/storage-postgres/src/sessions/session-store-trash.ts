import { randomUUID } from "node:crypto";
import { assertSafeId, describeValue, StowageError } from "@stowage/core";
import type { TrashedTranscript } from "@stowage/sessions";
import { assertSessionStoreProjectKey, type StoredSessionKey } from "@stowage/sessions/backend";
import { type SQL, sql } from "drizzle-orm";
import { rowsOf, type StowageDatabase } from "../database.js";
import { sqlStateOf } from "../database-errors.js";
import { runDatabase } from "../run-database.js";
import {
  sessionStoreEntries as entries,
  sessionStoreKeys as keys,
  sessionStoreTrash as trash,
  sessionStoreTrashEntries as trashEntries,
  sessionStoreTrashKeys as trashKeys,
} from "../schema.js";

// A delete with trash days moves the transcript's rows, as they are, into the trash tables in one
// transaction (nothing half moved, whatever crashes), and a restore moves them back the same way,
// ids (the entries' order) and key rows (mtimes, summaries) included.

const DAY_MS = 24 * 60 * 60 * 1000;
const DEFAULT_PURGE_LIMIT = 1000;

type Executor = Pick<StowageDatabase, "execute">;

/** The rows of a key: a main transcript's with its subkeys', a subpath's alone. */
const scopeOf = (stored: { projectKey: string; sessionId: string; subpath: string }): SQL =>
  stored.subpath === ""
    ? sql`project_key = ${stored.projectKey} AND session_id = ${stored.sessionId}`
    : sql`project_key = ${stored.projectKey} AND session_id = ${stored.sessionId} AND subpath = ${stored.subpath}`;

const notInTrash = (projectKey: string, trashId: string) =>
  new StowageError(
    "NOT_FOUND",
    `nothing in the trash of project ${projectKey} is ${describeValue(trashId)}`,
    {
      reason: "NOT_IN_TRASH",
    },
  );

const reused = (projectKey: string, sessionId: string) =>
  new StowageError(
    "CONFLICT",
    `session ${sessionId} of project ${projectKey} holds a transcript again (appended since it was deleted); restore refused, both kept`,
    { reason: "TRANSCRIPT_REUSED" },
  );

const iso = (value: unknown) => new Date(value as string | Date).toISOString();

function asTrashed(row: Record<string, unknown>): TrashedTranscript {
  return {
    trashId: row.trash_id as string,
    projectKey: row.project_key as string,
    sessionId: row.session_id as string,
    ...(row.subpath === "" ? {} : { subpath: row.subpath as string }),
    trashedAt: iso(row.trashed_at),
    purgeAfter: iso(row.purge_after),
    bytes: Number(row.bytes),
  };
}

function checkedIds(projectKey: unknown, trashId: unknown): asserts projectKey is string {
  assertSessionStoreProjectKey(projectKey);
  assertSafeId(trashId, "trashId");
}

/**
 * Moves a transcript's rows to the trash inside `tx` (the delete's transaction): entries first, as
 * a delete takes them, then key rows; nothing is trashed for a key that holds nothing.
 */
export async function trashTranscriptRows(
  tx: Executor,
  stored: StoredSessionKey,
  days: number,
): Promise<void> {
  const scope = scopeOf(stored);
  const trashId = randomUUID();
  const now = Date.now();
  await tx.execute(sql`
    INSERT INTO ${trash} (trash_id, project_key, session_id, subpath, trashed_at, purge_after, bytes)
    VALUES (${trashId}, ${stored.projectKey}, ${stored.sessionId}, ${stored.subpath},
            ${new Date(now).toISOString()}, ${new Date(now + Math.round(days * DAY_MS)).toISOString()}, 0)`);
  const [moved] = rowsOf(
    await tx.execute(sql`
      WITH moved AS (DELETE FROM ${entries} WHERE ${scope} RETURNING *),
           kept AS (
             INSERT INTO ${trashEntries} (trash_id, id, project_key, session_id, subpath, uuid, entry)
             SELECT ${trashId}, id, project_key, session_id, subpath, uuid, entry FROM moved
             RETURNING octet_length(entry) AS size)
      SELECT count(*) AS entries, coalesce(sum(size), 0) AS bytes FROM kept`),
  );
  const [movedKeys] = rowsOf(
    await tx.execute(sql`
      WITH moved AS (DELETE FROM ${keys} WHERE ${scope} RETURNING *),
           kept AS (
             INSERT INTO ${trashKeys} (trash_id, project_key, session_id, subpath, mtime, summary)
             SELECT ${trashId}, project_key, session_id, subpath, mtime, summary FROM moved
             RETURNING 1)
      SELECT count(*) AS keys FROM kept`),
  );
  if (Number(moved!.entries) === 0 && Number(movedKeys!.keys) === 0) {
    await tx.execute(sql`DELETE FROM ${trash} WHERE trash_id = ${trashId}`);
    return;
  }
  await tx.execute(sql`UPDATE ${trash} SET bytes = ${Number(moved!.bytes)} WHERE trash_id = ${trashId}`);
}

async function deleteTrashRows(tx: Executor, trashId: string): Promise<void> {
  await tx.execute(sql`DELETE FROM ${trashEntries} WHERE trash_id = ${trashId}`);
  await tx.execute(sql`DELETE FROM ${trashKeys} WHERE trash_id = ${trashId}`);
  await tx.execute(sql`DELETE FROM ${trash} WHERE trash_id = ${trashId}`);
}

/** The project's trashed transcripts, oldest delete first. */
export async function listTrashRows(
  db: StowageDatabase,
  projectKey: unknown,
  signal: AbortSignal | undefined,
): Promise<TrashedTranscript[]> {
  assertSessionStoreProjectKey(projectKey);
  return runDatabase(`session store trash list ${projectKey}`, signal, async () =>
    rowsOf(
      await db.execute(sql`
        SELECT * FROM ${trash} WHERE project_key = ${projectKey} ORDER BY trashed_at, trash_id`),
    ).map(asTrashed),
  );
}

/** The trash row of `trashId` in `projectKey`, locked for the transaction; NOT_FOUND when none. */
async function lockedTrashRow(tx: Executor, projectKey: string, trashId: string) {
  const [row] = rowsOf(
    await tx.execute(sql`
      SELECT * FROM ${trash} WHERE trash_id = ${trashId} AND project_key = ${projectKey} FOR UPDATE`),
  );
  if (!row) throw notInTrash(projectKey, trashId);
  return row;
}

/** Moves a trashed transcript's rows back, or CONFLICT when its key holds rows again. */
export async function restoreTrashRows(
  db: StowageDatabase,
  projectKey: unknown,
  trashId: unknown,
  signal: AbortSignal | undefined,
): Promise<TrashedTranscript> {
  checkedIds(projectKey, trashId);
  const id = trashId as string;
  return runDatabase(`session store trash restore ${projectKey} ${id}`, signal, () =>
    db.transaction(async (tx) => {
      const row = await lockedTrashRow(tx, projectKey, id);
      const item = asTrashed(row);
      const scope = scopeOf({ projectKey, sessionId: item.sessionId, subpath: item.subpath ?? "" });
      const [live] = rowsOf(
        await tx.execute(sql`
          SELECT EXISTS (SELECT 1 FROM ${keys} WHERE ${scope})
              OR EXISTS (SELECT 1 FROM ${entries} WHERE ${scope}) AS live`),
      );
      if (live!.live === true) throw reused(projectKey, item.sessionId);
      try {
        await tx.execute(sql`
          INSERT INTO ${keys} (project_key, session_id, subpath, mtime, summary)
          SELECT project_key, session_id, subpath, mtime, summary FROM ${trashKeys} WHERE trash_id = ${id}`);
        await tx.execute(sql`
          INSERT INTO ${entries} (id, project_key, session_id, subpath, uuid, entry)
          SELECT id, project_key, session_id, subpath, uuid, entry FROM ${trashEntries}
          WHERE trash_id = ${id} ORDER BY id`);
      } catch (err) {
        // An append that created the key after the check above: its row wins, the restore waits.
        if (sqlStateOf(err) === "23505") throw reused(projectKey, item.sessionId);
        throw err;
      }
      await deleteTrashRows(tx, id);
      return item;
    }),
  );
}

/** Deletes a trashed transcript's rows for good. */
export async function purgeTrashRows(
  db: StowageDatabase,
  projectKey: unknown,
  trashId: unknown,
  signal: AbortSignal | undefined,
): Promise<TrashedTranscript> {
  checkedIds(projectKey, trashId);
  const id = trashId as string;
  return runDatabase(`session store trash purge ${projectKey} ${id}`, signal, () =>
    db.transaction(async (tx) => {
      const item = asTrashed(await lockedTrashRow(tx, projectKey, id));
      await deleteTrashRows(tx, id);
      return item;
    }),
  );
}

/** Purges every project's trashed transcripts past `purge_after`, at most `limit`; how many. */
export async function purgeExpiredTrashRows(
  db: StowageDatabase,
  limit: unknown = DEFAULT_PURGE_LIMIT,
  signal: AbortSignal | undefined = undefined,
): Promise<number> {
  if (!Number.isSafeInteger(limit) || (limit as number) < 1) {
    throw new StowageError("INVALID_INPUT", `limit must be a positive integer, got ${describeValue(limit)}`);
  }
  return runDatabase("session store trash purge of expired transcripts", signal, () =>
    db.transaction(async (tx) => {
      // Rows another purge holds are skipped: two purges at once each take their own.
      const due = rowsOf(
        await tx.execute(sql`
          SELECT trash_id FROM ${trash} WHERE purge_after <= ${new Date().toISOString()}
          ORDER BY purge_after LIMIT ${limit as number} FOR UPDATE SKIP LOCKED`),
      ).map((row) => row.trash_id as string);
      for (const trashId of due) await deleteTrashRows(tx, trashId);
      return due.length;
    }),
  );
}
