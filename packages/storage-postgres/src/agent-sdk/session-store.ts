import { StowageError, throwIfAborted } from "@stowage/core";
import type {
  CompleteSessionStore,
  SessionKey,
  SessionStoreEntry,
  SessionSummaryEntry,
} from "@stowage/sessions";
import {
  assertAgentSdkInstalled,
  assertSessionStoreProjectKey,
  describeSessionKey,
  encodeJsonLines,
  loadSummaryFold,
  parseStoredEntry,
  parseStoredSummary,
  type StoredSessionKey,
  serializeEntries,
  toSessionScope,
  toStoredSessionKey,
} from "@stowage/sessions/backend";
import { sql } from "drizzle-orm";
import { assertDatabase, rowsOf, type StowageDatabase } from "../database.js";
import { runDatabase } from "../run-database.js";
import { sessionStoreEntries as entries, sessionStoreKeys as keys } from "../schema.js";

export interface PostgresSessionStoreOptions {
  /** A database with Stowage's tables: `connectPostgres`/`connectEmbedded`'s `db`, or the host's own. */
  db: StowageDatabase;
}

/**
 * A Claude Agent SDK `SessionStore` with every optional method, plus `{ signal }` as a last
 * argument (which the SDK never passes; callers may). Assignable to the SDK's own type.
 */
export type PostgresSessionStore = CompleteSessionStore;

/** Largest batch buffer a store keeps for reuse: a rare huge batch is not held for good. */
const MAX_SPARE_BYTES = 16 * 1024 * 1024;

const isViewOf = (view: Buffer, whole: Buffer) =>
  view.buffer === whole.buffer && view.byteOffset === whole.byteOffset;

/**
 * A stored entry or summary parsed and checked, or `INTEGRITY` / `CORRUPT_ROW` saying which
 * transcript and which row or column: this store never writes anything else, so a row that is
 * not one was changed outside it.
 */
function readRow<T>(parse: (text: string) => T, text: string, where: Record<string, unknown>): T {
  try {
    return parse(text);
  } catch (err) {
    throw new StowageError(
      "INTEGRITY",
      `session store row ${JSON.stringify(where)} is not readable: ${(err as Error).message}`,
      { cause: err, reason: "CORRUPT_ROW", details: where },
    );
  }
}

/**
 * A batch as the append statement takes it, or undefined when it is empty: the entries serialized
 * once and written newline-separated (JSON text never holds a raw newline) into one UTF-8
 * parameter, which the server splits without parsing it again, and their uuids. The JSON strings
 * are dropped here: kept across the statement's round trips they outlived the young generation
 * and were collected by full GCs, which cost more than the rest of the Node side together.
 */
function batchParameters(
  batch: unknown,
  into: Buffer | undefined,
): { lines: Buffer; uuids: (string | null)[] } | undefined {
  const serialized = serializeEntries(batch);
  if (serialized.length === 0) return undefined;
  return {
    lines: encodeJsonLines(
      serialized.map((entry) => entry.json),
      { finalNewline: false, into },
    ),
    uuids: serialized.map((entry) => entry.uuid),
  };
}

/** A transcript's entries in append order, each checked as stored; null for a key never written. */
async function loadEntries(
  db: StowageDatabase,
  stored: StoredSessionKey,
  signal: AbortSignal | undefined,
): Promise<SessionStoreEntry[] | null> {
  const key = describeSessionKey(stored);
  return runDatabase(`session store load ${key}`, signal, async () => {
    const rows = rowsOf(
      await db.execute(sql`
        SELECT id, entry FROM ${entries}
        WHERE project_key = ${stored.projectKey} AND session_id = ${stored.sessionId} AND subpath = ${stored.subpath}
        ORDER BY id`),
    );
    // No entries: a key never written (an empty append writes nothing either).
    return rows.length > 0
      ? rows.map((row) => readRow(parseStoredEntry, row.entry as string, { key, row: Number(row.id) }))
      : null;
  });
}

/** The stored summaries of a project's main transcripts, each checked. */
async function listSummaries(
  db: StowageDatabase,
  projectKey: string,
  signal: AbortSignal | undefined,
): Promise<SessionSummaryEntry[]> {
  assertSessionStoreProjectKey(projectKey);
  return runDatabase(`session store listSessionSummaries ${projectKey}`, signal, async () =>
    rowsOf(
      await db.execute(sql`
        SELECT session_id, summary FROM ${keys}
        WHERE project_key = ${projectKey} AND subpath = '' AND summary IS NOT NULL`),
    ).map((row) =>
      readRow(parseStoredSummary, row.summary as string, {
        key: `${projectKey}/${row.session_id as string}`,
        column: "summary",
      }),
    ),
  );
}

/**
 * The Claude Agent SDK's `SessionStore` on PostgreSQL (or PGlite): transcripts mirrored as rows,
 * `append` idempotent on `uuid` and order-preserving, `load` returning deep-equal entries or null,
 * summaries kept with the SDK's own `foldSessionSummary` inside the append transaction (which
 * holds the key's row lock, so concurrent appends to one session fold one after another), and
 * `delete` of a main transcript cascading to its subkeys. The SDK is an optional peer: it is
 * loaded on the first append, and a missing SDK fails here with UNAVAILABLE / PEER_MISSING.
 */
export function createPostgresSessionStore(options: PostgresSessionStoreOptions): PostgresSessionStore {
  const db = assertDatabase(options?.db, "createPostgresSessionStore");
  assertAgentSdkInstalled();
  // The buffer of the last batch, reused by the next append that finds it free: a new one of
  // megabytes per batch made V8 run full collections for the external memory alone.
  let spare: Buffer | undefined;
  const keepSpare = (used: Buffer | undefined) => {
    if (used && used.byteLength <= MAX_SPARE_BYTES && used.byteLength > (spare?.byteLength ?? -1))
      spare = used;
  };

  /** One batch in one transaction: the rows, then the folded summary of a main transcript. */
  async function appendRows(
    stored: StoredSessionKey,
    key: SessionKey,
    batch: SessionStoreEntry[],
    lines: Buffer,
    uuids: (string | null)[],
    context: string,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const fold = stored.subpath === "" ? await loadSummaryFold() : undefined;
    await runDatabase(context, signal, () =>
      db.transaction(async (tx) => {
        // One statement: upserting the key row locks it until commit (appends to one key run
        // one at a time, its mtime only moves forward), and the insert reads `head`, so it
        // runs after the lock is held and its ids follow the previous batch's.
        const [result] = rowsOf(
          await tx.execute(sql`
              WITH head AS (
                INSERT INTO ${keys} (project_key, session_id, subpath, mtime)
                VALUES (${stored.projectKey}, ${stored.sessionId}, ${stored.subpath},
                        floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint)
                ON CONFLICT (project_key, session_id, subpath)
                DO UPDATE SET mtime = GREATEST(excluded.mtime, ${keys.mtime} + 1)
                RETURNING mtime, summary
              ), batch AS (
                SELECT line.value AS entry, id.value AS uuid, line.position
                FROM unnest(string_to_array(convert_from(${lines}::bytea, 'UTF8'), E'\n'))
                  WITH ORDINALITY AS line(value, position)
                JOIN json_array_elements_text(${JSON.stringify(uuids)}::json) WITH ORDINALITY AS id(value, position)
                  USING (position)
              ), inserted AS (
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
        if (fold) {
          // Only entries stored now are folded: a retried batch must not replay older titles.
          const storedUuids = new Set<string>(JSON.parse((result?.uuids as string | null) ?? "[]"));
          const fresh: SessionStoreEntry[] = [];
          for (const [index, uuid] of uuids.entries()) {
            if (uuid === null || storedUuids.delete(uuid)) fresh.push(batch[index]!);
          }
          const previous =
            typeof result?.summary === "string"
              ? readRow(parseStoredSummary, result.summary, {
                  key: `${stored.projectKey}/${stored.sessionId}`,
                  column: "summary",
                })
              : undefined;
          const summary = fold(previous, key, fresh, { mtime: Number(result?.mtime) });
          await tx.execute(sql`
              UPDATE ${keys} SET summary = ${JSON.stringify(summary)}
              WHERE project_key = ${stored.projectKey} AND session_id = ${stored.sessionId} AND subpath = ''`);
        }
        // The last moment to give up: past this, the batch is committed.
        throwIfAborted(signal, context);
      }),
    );
  }

  return {
    async append(key, batch, { signal } = {}) {
      const stored = toStoredSessionKey(key);
      const scratch = spare;
      spare = undefined;
      let lines: Buffer | undefined;
      try {
        const parameters = batchParameters(batch, scratch);
        // An empty batch changes nothing (the SDK's contract): a key never written stays null.
        if (parameters === undefined) return;
        lines = parameters.lines;
        const context = `session store append ${describeSessionKey(stored)}`;
        await appendRows(stored, key, batch, lines, parameters.uuids, context, signal);
      } finally {
        // The transaction is over (or never began), so the driver is done with the bytes.
        keepSpare(!lines || (scratch && isViewOf(lines, scratch)) ? scratch : lines);
      }
    },

    // async: a key refused by the checks rejects the promise, it does not throw from the call.
    load: async (key, { signal } = {}) => loadEntries(db, toStoredSessionKey(key), signal),

    async listSessions(projectKey, { signal } = {}) {
      assertSessionStoreProjectKey(projectKey);
      return runDatabase(`session store listSessions ${projectKey}`, signal, async () =>
        rowsOf(
          await db.execute(sql`
            SELECT session_id, mtime FROM ${keys} WHERE project_key = ${projectKey} AND subpath = ''`),
        ).map((row) => ({ sessionId: row.session_id as string, mtime: Number(row.mtime) })),
      );
    },

    listSessionSummaries: (projectKey, { signal } = {}) => listSummaries(db, projectKey, signal),

    async delete(key, { signal } = {}) {
      const stored = toStoredSessionKey(key);
      const context = `session store delete ${describeSessionKey(stored)}`;
      // A main transcript takes its subkeys (subagent transcripts) with it.
      const scope =
        stored.subpath === ""
          ? sql`project_key = ${stored.projectKey} AND session_id = ${stored.sessionId}`
          : sql`project_key = ${stored.projectKey} AND session_id = ${stored.sessionId} AND subpath = ${stored.subpath}`;
      await runDatabase(context, signal, () =>
        db.transaction(async (tx) => {
          await tx.execute(sql`DELETE FROM ${entries} WHERE ${scope}`);
          await tx.execute(sql`DELETE FROM ${keys} WHERE ${scope}`);
          throwIfAborted(signal, context);
        }),
      );
    },

    async listSubkeys(key, { signal } = {}) {
      const { projectKey, sessionId } = toSessionScope(key);
      return runDatabase(`session store listSubkeys ${projectKey}/${sessionId}`, signal, async () =>
        rowsOf(
          await db.execute(sql`
            SELECT subpath FROM ${keys}
            WHERE project_key = ${projectKey} AND session_id = ${sessionId} AND subpath <> ''
            ORDER BY subpath`),
        ).map((row) => row.subpath as string),
      );
    },
  };
}
