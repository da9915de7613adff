import { StowageError } from "@stowage/core";
import type { SessionStoreEntry, SessionSummaryEntry } from "@stowage/sessions";
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
 * A transcript's entries in append order, each checked as stored, with the payloads that moved to
 * the blob store put back; null for a key never written.
 */
export async function loadEntries(
  db: StowageDatabase,
  payloads: EntryPayloads | undefined,
  stored: StoredSessionKey,
  signal: AbortSignal | undefined,
): Promise<SessionStoreEntry[] | null> {
  const key = describeSessionKey(stored);
  const moved = new Map<number, NonNullable<StoredEntryLine["moved"]>>();
  const loaded = await runDatabase(`session store load ${key}`, signal, async () => {
    const rows = rowsOf(
      await db.execute(sql`
        SELECT id, entry FROM ${entries}
        WHERE project_key = ${stored.projectKey} AND session_id = ${stored.sessionId} AND subpath = ${stored.subpath}
        ORDER BY id`),
    );
    // No entries: a key never written (an empty append writes nothing either).
    if (rows.length === 0) return null;
    return rows.map((row, index) => {
      const line = readRow(parseStoredEntryLine, row.entry as string, { key, row: Number(row.id) });
      if (line.moved) moved.set(index, line.moved);
      return line.entry;
    });
  });
  if (loaded) await putBackEntryPayloads(payloads, loaded, moved, key, signal);
  return loaded;
}

/** The stored summaries of a project's main transcripts, each checked. */
export async function listSummaries(
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
      readSummary({ projectKey, sessionId: row.session_id as string, subpath: "" }, row.summary as string),
    ),
  );
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
