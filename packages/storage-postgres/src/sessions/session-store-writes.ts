import { throwIfAborted } from "@stowage/core";
import type { SessionKey, SessionStoreEntry, SessionStoreSeal } from "@stowage/sessions";
import { loadSummaryFold, type StoredSessionKey } from "@stowage/sessions/backend";
import { sql } from "drizzle-orm";
import { rowsOf, type StowageDatabase } from "../database.js";
import { runDatabase } from "../run-database.js";
import { sessionStoreEntries as entries, sessionStoreKeys as keys } from "../schema.js";
import { appendAhead } from "./session-store-append-ahead.js";
import {
  type BatchParameters,
  batchRows,
  type Executor,
  type KnownHead,
  type NextHead,
} from "./session-store-batch.js";
import { readSummary } from "./session-store-rows.js";
import { openSummaryRow, summaryRowText } from "./session-store-sealed-rows.js";
import { trashTranscriptRows } from "./session-store-trash.js";

/**
 * One statement: upserting the key row locks it until commit (appends to one key run one at a
 * time, its mtime only moves forward), and the insert reads `head`, so it runs after the lock is
 * held and its ids follow the previous batch's. Returns the key's mtime, its summary before this
 * batch and the uuids this batch stored (JSON text).
 */
export async function insertBatch(
  tx: Executor,
  stored: StoredSessionKey,
  { lines, uuids }: Pick<BatchParameters, "lines" | "uuids">,
): Promise<Record<string, unknown> | undefined> {
  const [result] = rowsOf(
    await tx.execute(sql`
      WITH head AS (
        INSERT INTO ${keys} (project_key, session_id, subpath, mtime)
        VALUES (${stored.projectKey}, ${stored.sessionId}, ${stored.subpath},
                floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint)
        ON CONFLICT (project_key, session_id, subpath)
        DO UPDATE SET mtime = GREATEST(excluded.mtime, ${keys.mtime} + 1)
        RETURNING mtime, summary
      ), batch AS (${batchRows({ lines, uuids })}), inserted AS (
        INSERT INTO ${entries} (project_key, session_id, subpath, uuid, entry)
        SELECT ${stored.projectKey}, ${stored.sessionId}, ${stored.subpath}, batch.uuid, batch.entry
        FROM batch CROSS JOIN head
        ORDER BY batch.position
        ON CONFLICT (project_key, session_id, subpath, uuid) WHERE uuid IS NOT NULL DO NOTHING
        RETURNING uuid
      )
      SELECT head.mtime, head.summary,
             (SELECT json_agg(uuid) FROM inserted WHERE uuid IS NOT NULL)::text AS uuids
      FROM head`),
  );
  return result;
}

/**
 * Appends one batch atomically and returns the main transcript's key row as it now is (undefined
 * for a subkey, whose appends keep no summary). A subkey's batch is one statement. A main
 * transcript's batch is one statement too when `known` still describes its key row (see
 * `appendAhead`), else one transaction: the rows, then the summary folded with the SDK's
 * `foldSessionSummary` over the entries stored now (a retried batch must not replay older titles).
 * With `seal`, the summary is opened before it folds and sealed before it is stored.
 */
export async function appendBatch(
  { db, seal }: { db: StowageDatabase; seal: SessionStoreSeal | undefined },
  key: SessionKey,
  stored: StoredSessionKey,
  batch: readonly SessionStoreEntry[],
  parameters: BatchParameters,
  known: KnownHead | undefined,
  context: string,
  signal: AbortSignal | undefined,
): Promise<KnownHead | undefined> {
  if (stored.subpath !== "") {
    // One statement is its own transaction: no BEGIN and COMMIT round trips.
    await runDatabase(context, signal, () => insertBatch(db, stored, parameters));
    return undefined;
  }
  const fold = await loadSummaryFold();
  const nextHead: NextHead = async (previous, entries, mtime) => {
    const text = JSON.stringify(fold(previous, key, [...entries], { mtime }));
    return { mtime, text, summary: await summaryRowText(seal, stored, text, signal) };
  };
  if (known && !hasRepeatedUuid(parameters.uuids)) {
    const ahead = await runDatabase(context, signal, () =>
      appendAhead(db, stored, batch, parameters, known, nextHead),
    );
    if (ahead) return ahead;
  }
  return runDatabase(context, signal, () =>
    db.transaction(async (tx) => {
      const result = await insertBatch(tx, stored, parameters);
      const storedUuids = new Set<string>(JSON.parse((result?.uuids as string | null) ?? "[]"));
      const fresh: SessionStoreEntry[] = [];
      for (const [index, uuid] of parameters.entryUuids.entries()) {
        if (uuid === null || storedUuids.delete(uuid)) fresh.push(batch[index]!);
      }
      const previous =
        typeof result?.summary === "string"
          ? readSummary(stored, await openSummaryRow(seal, stored, result.summary, signal))
          : undefined;
      const head = await nextHead(previous, fresh, Number(result?.mtime));
      await tx.execute(sql`
        UPDATE ${keys} SET summary = ${head.summary}
        WHERE project_key = ${stored.projectKey} AND session_id = ${stored.sessionId} AND subpath = ''`);
      // The last moment to give up: past this, the batch is committed.
      throwIfAborted(signal, context);
      return head;
    }),
  );
}

/** True when a uuid appears twice in one batch: only the first is stored, so not all are fresh. */
function hasRepeatedUuid(uuids: readonly (string | null)[]): boolean {
  const seen = new Set<string>();
  for (const uuid of uuids) {
    if (uuid === null) continue;
    if (seen.has(uuid)) return true;
    seen.add(uuid);
  }
  return false;
}

/** Deletes a transcript; a main transcript takes its subkeys (subagent transcripts) with it. */
export async function deleteTranscript(
  db: StowageDatabase,
  stored: StoredSessionKey,
  trashDays: number,
  context: string,
  signal: AbortSignal | undefined,
): Promise<void> {
  const scope =
    stored.subpath === ""
      ? sql`project_key = ${stored.projectKey} AND session_id = ${stored.sessionId}`
      : sql`project_key = ${stored.projectKey} AND session_id = ${stored.sessionId} AND subpath = ${stored.subpath}`;
  await runDatabase(context, signal, () =>
    db.transaction(async (tx) => {
      if (trashDays > 0) await trashTranscriptRows(tx, stored, trashDays);
      else {
        await tx.execute(sql`DELETE FROM ${entries} WHERE ${scope}`);
        await tx.execute(sql`DELETE FROM ${keys} WHERE ${scope}`);
      }
      throwIfAborted(signal, context);
    }),
  );
}
