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
import {
  INT8_OID,
  parsedOnArrivalOf,
  type QueryParsedOnArrival,
  TEXT_OID,
} from "../rows-parsed-on-arrival.js";
import { runDatabase } from "../run-database.js";
import { sessionStoreEntries as entries, sessionStoreKeys as keys } from "../schema.js";
import {
  checkClearRefs,
  type EntryRowOpener,
  entryRowOpener,
  openSummaryRow,
} from "./session-store-sealed-rows.js";

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

/**
 * Rows a load on node-postgres gathers as they arrive before opening and parsing them (one `open`
 * of the seal each): about 1 MB of text, young when it is parsed.
 */
const ARRIVAL_PAGE_ROWS = 200;

/** A transcript's entries as a load takes them, and where each one's moved payloads go back. */
interface Loading {
  all: SessionStoreEntry[];
  moved: Map<number, NonNullable<StoredEntryLine["moved"]>>;
}

function take(loading: Loading, lines: readonly StoredEntryLine[]): void {
  for (const line of lines) {
    if (line.moved) loading.moved.set(loading.all.length, line.moved);
    loading.all.push(line.entry);
  }
}

interface LoadContext {
  db: StowageDatabase;
  seal: SessionStoreSeal | undefined;
  stored: StoredSessionKey;
  key: string;
  context: string;
  signal: AbortSignal | undefined;
  /** Opens the rows in id order; a load that starts over starts a new one. */
  opener: EntryRowOpener;
}

const entriesAfter = (stored: StoredSessionKey, from: number, inclusive: boolean, limit?: number) => sql`
  SELECT id, entry FROM ${entries}
  WHERE project_key = ${stored.projectKey} AND session_id = ${stored.sessionId}
    AND subpath = ${stored.subpath} AND id ${inclusive ? sql`>=` : sql`>`} ${from}
  ORDER BY id${limit === undefined ? sql`` : sql` LIMIT ${limit}`}`;

/**
 * The next rows' texts opened (one `open` of the seal for the batches among them) and each entry's
 * line checked; `ids[i]` names row i in errors.
 */
async function linesOf(
  { seal, key, opener }: LoadContext,
  texts: readonly string[],
  ids: readonly unknown[],
): Promise<StoredEntryLine[]> {
  const where = (index: number) => ({ key, row: Number(ids[index]) });
  const opened = await opener.open(texts, where);
  return opened.map(({ line: text, clearRefs, row }) => {
    const line = readRow(parseStoredEntryLine, text, where(row));
    checkClearRefs(line.moved, clearRefs, seal !== undefined, where(row));
    return line;
  });
}

/**
 * node-postgres: one statement (one snapshot), its rows opened and parsed a few hundred at a time
 * as they arrive, while the server sends the rest, so no text lives long.
 */
async function loadOnArrival(
  load: LoadContext,
  query: QueryParsedOnArrival,
  loading: Loading,
): Promise<void> {
  const pages: Promise<StoredEntryLine[]>[] = [];
  let texts: string[] = [];
  let ids: string[] = [];
  let id = "";
  const openPage = () => {
    const page = linesOf(load, texts, ids);
    // Awaited in order below; a page that fails before then must not be an unhandled rejection.
    page.catch(() => {});
    pages.push(page);
    texts = [];
    ids = [];
  };
  await query(entriesAfter(load.stored, 0, false), {
    // A row's columns are parsed in their order: its id, then its entry.
    [INT8_OID]: (text) => {
      id = text;
    },
    [TEXT_OID]: (text) => {
      texts.push(text);
      ids.push(id);
      if (texts.length === ARRIVAL_PAGE_ROWS) openPage();
    },
  });
  if (texts.length > 0) openPage();
  throwIfAborted(load.signal, load.context);
  for (const page of pages) take(loading, await page);
}

/** Pages of rows in one snapshot, each page opened with one `open` of the seal: PGlite, which returns a result whole. */
async function loadInPages(load: LoadContext, loading: Loading): Promise<void> {
  const { db, stored, context, signal } = load;
  const readPage = async (executor: Executor, from: number, inclusive: boolean) => {
    const rows = rowsOf(await executor.execute(entriesAfter(stored, from, inclusive, LOAD_PAGE_ROWS)));
    throwIfAborted(signal, context);
    return rows;
  };
  const takePage = async (rows: Record<string, unknown>[]) => {
    const lines = await linesOf(
      load,
      rows.map((row) => row.entry as string),
      rows.map((row) => row.id),
    );
    take(loading, lines);
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
        load.opener = entryRowOpener(load.seal, stored, signal);
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
  const load: LoadContext = {
    db,
    seal,
    stored,
    key,
    context: `session store load ${key}`,
    signal,
    opener: entryRowOpener(seal, stored, signal),
  };
  const loading: Loading = { all: [], moved: new Map() };
  const query = parsedOnArrivalOf(db);
  await runDatabase(load.context, signal, () =>
    query ? loadOnArrival(load, query, loading) : loadInPages(load, loading),
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
