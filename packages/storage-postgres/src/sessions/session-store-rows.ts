import { StowageError, throwIfAborted } from "@stowage/core";
import type { SessionStoreEntry, SessionStoreSeal, SessionSummaryEntry } from "@stowage/sessions";
import {
  assertSessionStoreProjectKey,
  describeSessionKey,
  type EntryPayloads,
  parseStoredEntryLine,
  parseStoredSummary,
  putBackEntryPayloads,
  type StoredEntryLine,
  type StoredSessionKey,
} from "@stowage/sessions/backend";
import { sql } from "drizzle-orm";
import { rowsOf, type StowageDatabase } from "../database.js";
import { runDatabase } from "../run-database.js";
import { sessionStoreEntries as entries, sessionStoreKeys as keys } from "../schema.js";
import { checkClearRefs, openEntryRows, openSummaryRow } from "./session-store-sealed-rows.js";

type Executor = Pick<StowageDatabase, "execute">;

/**
 * A stored entry or summary parsed and checked, or `INTEGRITY` / `CORRUPT_ROW` saying which
 * transcript and which row or column: this store never writes anything else, so a row that is
 * not one was changed outside it.
 */
export function readRow<T>(parse: (text: string) => T, text: string, where: Record<string, unknown>): T {
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

/** A main transcript's stored summary (JSON text), checked. */
export function readSummary(stored: StoredSessionKey, text: string): SessionSummaryEntry {
  return readRow(parseStoredSummary, text, {
    key: `${stored.projectKey}/${stored.sessionId}`,
    column: "summary",
  });
}

/**
 * Rows one query of a load reads (about 5 MB of entries of 5 KB). Read all at once, a long
 * transcript's row strings (226 MB for 50,000 entries) all lived until the last was parsed, so
 * V8 promoted them and ran full collections; a page's strings die young, as the peer's do.
 */
const LOAD_PAGE_ROWS = 1_000;

/**
 * A transcript's entries in append order, each checked as stored, with the payloads that moved to
 * the blob store put back; null for a key never written.
 */
export async function loadEntries(
  { db, seal }: { db: StowageDatabase; seal: SessionStoreSeal | undefined },
  payloads: EntryPayloads | undefined,
  stored: StoredSessionKey,
  signal: AbortSignal | undefined,
): Promise<SessionStoreEntry[] | null> {
  const key = describeSessionKey(stored);
  const moved = new Map<number, NonNullable<StoredEntryLine["moved"]>>();
  const context = `session store load ${key}`;
  const all: SessionStoreEntry[] = [];
  const readPage = async (executor: Executor, from: number, inclusive: boolean) => {
    const rows = rowsOf(
      await executor.execute(sql`
        SELECT id, entry FROM ${entries}
        WHERE project_key = ${stored.projectKey} AND session_id = ${stored.sessionId}
          AND subpath = ${stored.subpath} AND id ${inclusive ? sql`>=` : sql`>`} ${from}
        ORDER BY id LIMIT ${LOAD_PAGE_ROWS}`),
    );
    throwIfAborted(signal, context);
    return rows;
  };
  // One `open` of the seal a page.
  const take = async (rows: Record<string, unknown>[]) => {
    const where = (index: number) => ({ key, row: Number(rows[index]!.id) });
    const texts = rows.map((row) => row.entry as string);
    const opened = await openEntryRows(seal, stored, texts, where, signal);
    for (const [index, { line: text, clearRefs }] of opened.entries()) {
      const line = readRow(parseStoredEntryLine, text, where(index));
      checkClearRefs(line.moved, clearRefs, seal !== undefined, where(index));
      if (line.moved) moved.set(all.length, line.moved);
      all.push(line.entry);
    }
  };
  const loaded = await runDatabase(context, signal, async () => {
    // Most transcripts are one page: one statement, no transaction.
    const first = await readPage(db, 0, false);
    await take(first);
    if (first.length < LOAD_PAGE_ROWS) return all.length === 0 ? null : all;
    // The rest in one snapshot, from the last row read: while that row is still there, the
    // transcript was not deleted in between (appends only add rows after it), else start over.
    return db.transaction(
      async (tx) => {
        let page = await readPage(tx, Number(first.at(-1)!.id), true);
        if (page[0]?.id !== first.at(-1)!.id) {
          all.length = 0;
          moved.clear();
          page = await readPage(tx, 0, false);
          await take(page);
        } else await take(page.slice(1));
        while (page.length === LOAD_PAGE_ROWS) {
          page = await readPage(tx, Number(page.at(-1)!.id), false);
          await take(page);
        }
        // No entries: a key never written (an empty append writes nothing either).
        return all.length === 0 ? null : all;
      },
      { isolationLevel: "repeatable read", accessMode: "read only" },
    );
  });
  if (loaded) await putBackEntryPayloads(payloads, loaded, moved, key, signal);
  return loaded;
}

/** The stored summaries of a project's main transcripts, each checked. */
export async function listSummaries(
  { db, seal }: { db: StowageDatabase; seal: SessionStoreSeal | undefined },
  projectKey: string,
  signal: AbortSignal | undefined,
): Promise<SessionSummaryEntry[]> {
  assertSessionStoreProjectKey(projectKey);
  return runDatabase(`session store listSessionSummaries ${projectKey}`, signal, async () => {
    const rows = rowsOf(
      await db.execute(sql`
        SELECT session_id, summary FROM ${keys}
        WHERE project_key = ${projectKey} AND subpath = '' AND summary IS NOT NULL`),
    );
    // Each summary is bound to its own transcript: one `open` each.
    return Promise.all(
      rows.map(async (row) => {
        const stored = { projectKey, sessionId: row.session_id as string, subpath: "" };
        return readSummary(stored, await openSummaryRow(seal, stored, row.summary as string, signal));
      }),
    );
  });
}

/** A project's main transcripts with the time of their last append. */
export async function listSessions(
  db: StowageDatabase,
  projectKey: string,
  signal: AbortSignal | undefined,
): Promise<{ sessionId: string; mtime: number }[]> {
  assertSessionStoreProjectKey(projectKey);
  return runDatabase(`session store listSessions ${projectKey}`, signal, async () =>
    rowsOf(
      await db.execute(sql`
        SELECT session_id, mtime FROM ${keys} WHERE project_key = ${projectKey} AND subpath = ''`),
    ).map((row) => ({ sessionId: row.session_id as string, mtime: Number(row.mtime) })),
  );
}

/** The subpaths (subagent transcripts) stored under a main transcript, in order. */
export async function listSubkeys(
  db: StowageDatabase,
  { projectKey, sessionId }: { projectKey: string; sessionId: string },
  signal: AbortSignal | undefined,
): Promise<string[]> {
  return runDatabase(`session store listSubkeys ${projectKey}/${sessionId}`, signal, async () =>
    rowsOf(
      await db.execute(sql`
        SELECT subpath FROM ${keys}
        WHERE project_key = ${projectKey} AND session_id = ${sessionId} AND subpath <> ''
        ORDER BY subpath`),
    ).map((row) => row.subpath as string),
  );
}
