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
import { parsedOnArrivalOf, type QueryParsedOnArrival } from "../rows-parsed-on-arrival.js";
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
 * Rows one query of a paged load reads (about 5 MB of entries of 5 KB). Read all at once, a long
 * transcript's row strings (226 MB for 50,000 entries) all lived until the last was parsed, so
 * V8 promoted them and ran full collections; a page's strings die young, as the peer's do.
 */
const LOAD_PAGE_ROWS = 1_000;

/** A transcript's entries as a load takes them, and where each one's moved payloads go back. */
interface Loading {
  all: SessionStoreEntry[];
  moved: Map<number, NonNullable<StoredEntryLine["moved"]>>;
}

function take(loading: Loading, line: StoredEntryLine): void {
  if (line.moved) loading.moved.set(loading.all.length, line.moved);
  loading.all.push(line.entry);
}

interface LoadContext {
  db: StowageDatabase;
  seal: SessionStoreSeal | undefined;
  stored: StoredSessionKey;
  key: string;
  context: string;
  signal: AbortSignal | undefined;
}

const entriesAfter = (stored: StoredSessionKey, from: number, inclusive: boolean, limit?: number) => sql`
  SELECT id, entry FROM ${entries}
  WHERE project_key = ${stored.projectKey} AND session_id = ${stored.sessionId}
    AND subpath = ${stored.subpath} AND id ${inclusive ? sql`>=` : sql`>`} ${from}
  ORDER BY id${limit === undefined ? sql`` : sql` LIMIT ${limit}`}`;

/** What a clear row's text became as it arrived: its line, or the text a check will report on. */
type ArrivedEntry = { line: StoredEntryLine } | { unreadable: string };

function parseArrivedEntry(text: string): ArrivedEntry {
  try {
    return { line: parseStoredEntryLine(text) };
  } catch {
    return { unreadable: text };
  }
}

/**
 * Clear rows on node-postgres: one statement (one snapshot), each row parsed as it arrives. A row
 * that did not parse goes through the paged load's checks, so it fails the same way (FORBIDDEN
 * for a sealed row, INTEGRITY naming the row otherwise).
 */
async function loadParsedOnArrival(
  load: LoadContext,
  queryParsedOnArrival: QueryParsedOnArrival,
  loading: Loading,
): Promise<void> {
  const rows = await queryParsedOnArrival(entriesAfter(load.stored, 0, false), parseArrivedEntry);
  throwIfAborted(load.signal, load.context);
  for (const row of rows) {
    const arrived = row.entry as ArrivedEntry;
    if ("line" in arrived) {
      take(loading, arrived.line);
      continue;
    }
    const where = () => ({ key: load.key, row: Number(row.id) });
    const [opened] = await openEntryRows(undefined, load.stored, [arrived.unreadable], where, load.signal);
    take(loading, readRow(parseStoredEntryLine, opened!.line, where()));
  }
}

/**
 * Pages of rows in one snapshot, each page's texts opened with one `open` of the seal: sealed
 * rows, and PGlite (which hands back a result whole).
 */
async function loadInPages({ db, seal, stored, key, context, signal }: LoadContext, loading: Loading) {
  const readPage = async (executor: Executor, from: number, inclusive: boolean) => {
    const rows = rowsOf(await executor.execute(entriesAfter(stored, from, inclusive, LOAD_PAGE_ROWS)));
    throwIfAborted(signal, context);
    return rows;
  };
  const takePage = async (rows: Record<string, unknown>[]) => {
    const where = (index: number) => ({ key, row: Number(rows[index]!.id) });
    const texts = rows.map((row) => row.entry as string);
    const opened = await openEntryRows(seal, stored, texts, where, signal);
    for (const [index, { line: text, clearRefs }] of opened.entries()) {
      const line = readRow(parseStoredEntryLine, text, where(index));
      checkClearRefs(line.moved, clearRefs, seal !== undefined, where(index));
      take(loading, line);
    }
  };
  // Most transcripts are one page: one statement, no transaction.
  const first = await readPage(db, 0, false);
  await takePage(first);
  if (first.length < LOAD_PAGE_ROWS) return;
  // The rest in one snapshot, from the last row read: while that row is still there, the
  // transcript was not deleted in between (appends only add rows after it), else start over.
  await db.transaction(
    async (tx) => {
      let page = await readPage(tx, Number(first.at(-1)!.id), true);
      if (page[0]?.id !== first.at(-1)!.id) {
        loading.all.length = 0;
        loading.moved.clear();
        page = await readPage(tx, 0, false);
        await takePage(page);
      } else await takePage(page.slice(1));
      while (page.length === LOAD_PAGE_ROWS) {
        page = await readPage(tx, Number(page.at(-1)!.id), false);
        await takePage(page);
      }
    },
    { isolationLevel: "repeatable read", accessMode: "read only" },
  );
}

/**
 * A transcript's entries in append order, each checked as stored, with the payloads that moved to
 * the blob store put back; null for a key never written (an empty append writes nothing either).
 */
export async function loadEntries(
  { db, seal }: { db: StowageDatabase; seal: SessionStoreSeal | undefined },
  payloads: EntryPayloads | undefined,
  stored: StoredSessionKey,
  signal: AbortSignal | undefined,
): Promise<SessionStoreEntry[] | null> {
  const key = describeSessionKey(stored);
  const load: LoadContext = { db, seal, stored, key, context: `session store load ${key}`, signal };
  const loading: Loading = { all: [], moved: new Map() };
  // Sealed rows are opened a page at a time (one `open` each), so they keep to pages.
  const queryParsedOnArrival = seal ? undefined : parsedOnArrivalOf(db);
  await runDatabase(load.context, signal, () =>
    queryParsedOnArrival
      ? loadParsedOnArrival(load, queryParsedOnArrival, loading)
      : loadInPages(load, loading),
  );
  if (loading.all.length === 0) return null;
  await putBackEntryPayloads(payloads, loading.all, loading.moved, key, signal);
  return loading.all;
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
