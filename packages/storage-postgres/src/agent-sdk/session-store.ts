import {
  foldSessionSummary,
  type SessionKey,
  type SessionStore,
  type SessionStoreEntry,
  type SessionSummaryEntry,
} from "@anthropic-ai/claude-agent-sdk";
import { throwIfAborted } from "@stowage/core";
import { sql } from "drizzle-orm";
import { rowsOf, type StowageDatabase } from "../database.js";
import { runDatabase } from "../run-database.js";
import { sessionStoreEntries as entries, sessionStoreKeys as keys } from "../schema.js";
import {
  assertStoreProjectKey,
  type SerializedEntry,
  type StoredKey,
  serializeEntries,
  toSessionScope,
  toStoredKey,
} from "./session-key.js";

export interface StoreOperationOptions {
  signal?: AbortSignal;
}

/**
 * A Claude Agent SDK `SessionStore` with every optional method, plus `{ signal }` as a last
 * argument (which the SDK never passes; callers may).
 */
export interface PostgresSessionStore extends Required<SessionStore> {
  append(key: SessionKey, entries: SessionStoreEntry[], options?: StoreOperationOptions): Promise<void>;
  load(key: SessionKey, options?: StoreOperationOptions): Promise<SessionStoreEntry[] | null>;
  listSessions(
    projectKey: string,
    options?: StoreOperationOptions,
  ): Promise<Array<{ sessionId: string; mtime: number }>>;
  listSessionSummaries(projectKey: string, options?: StoreOperationOptions): Promise<SessionSummaryEntry[]>;
  delete(key: SessionKey, options?: StoreOperationOptions): Promise<void>;
  listSubkeys(
    key: { projectKey: string; sessionId: string },
    options?: StoreOperationOptions,
  ): Promise<string[]>;
}

const describeKey = (key: StoredKey) =>
  `${key.projectKey}/${key.sessionId}${key.subpath ? `/${key.subpath}` : ""}`;

/** The entries the insert actually stored, in order: new uuids (first occurrence) and every uuid-less entry. */
function insertedEntries(
  batch: SerializedEntry[],
  original: SessionStoreEntry[],
  storedUuids: Set<string>,
): SessionStoreEntry[] {
  const out: SessionStoreEntry[] = [];
  for (const [index, entry] of batch.entries()) {
    if (entry.uuid === null) out.push(original[index]!);
    else if (storedUuids.delete(entry.uuid)) out.push(original[index]!);
  }
  return out;
}

/**
 * The Claude Agent SDK's `SessionStore` on PostgreSQL (or PGlite): transcripts mirrored as rows,
 * `append` idempotent on `uuid` and order-preserving, `load` returning deep-equal entries or null,
 * summaries kept with the SDK's own `foldSessionSummary` inside the append transaction (which
 * holds the key's row lock, so concurrent appends to one session fold one after another), and
 * `delete` of a main transcript cascading to its subkeys.
 */
export function createPostgresSessionStore(db: StowageDatabase): PostgresSessionStore {
  return {
    async append(key, batch, { signal } = {}) {
      const stored = toStoredKey(key);
      const serialized = serializeEntries(batch);
      const context = `session store append ${describeKey(stored)}`;
      await runDatabase(context, signal, () =>
        db.transaction(async (tx) => {
          // Upserting the key row locks it until commit: appends to one key run one at a time,
          // and its mtime (database clock, ms) only moves forward.
          const [head] = rowsOf(
            await tx.execute(sql`
              INSERT INTO ${keys} (project_key, session_id, subpath, mtime)
              VALUES (${stored.projectKey}, ${stored.sessionId}, ${stored.subpath},
                      floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint)
              ON CONFLICT (project_key, session_id, subpath)
              DO UPDATE SET mtime = GREATEST(excluded.mtime, ${keys.mtime} + 1)
              RETURNING mtime, summary`),
          );
          let storedUuids = new Set<string>();
          if (serialized.length > 0) {
            // Plain parameters (two per entry) rather than two big text[] literals: node-postgres
            // would escape every quote of every JSON line to build those.
            const rows = sql.join(
              serialized.map(
                (entry, position) => sql`(${entry.uuid}, ${entry.json}, ${sql.raw(String(position))})`,
              ),
              sql`, `,
            );
            const inserted = rowsOf(
              await tx.execute(sql`
                INSERT INTO ${entries} (project_key, session_id, subpath, uuid, entry)
                SELECT ${stored.projectKey}, ${stored.sessionId}, ${stored.subpath}, batch.uuid, batch.entry
                FROM (VALUES ${rows}) AS batch(uuid, entry, position)
                ORDER BY batch.position
                ON CONFLICT (project_key, session_id, subpath, uuid) WHERE uuid IS NOT NULL DO NOTHING
                RETURNING uuid`),
            );
            storedUuids = new Set(inserted.flatMap((row) => (row.uuid === null ? [] : [row.uuid as string])));
          }
          if (stored.subpath === "") {
            // Only entries stored now are folded: a retried batch must not replay older titles.
            const previous =
              typeof head?.summary === "string"
                ? (JSON.parse(head.summary) as SessionSummaryEntry)
                : undefined;
            const summary = foldSessionSummary(
              previous,
              key,
              insertedEntries(serialized, batch, storedUuids),
              {
                mtime: Number(head?.mtime),
              },
            );
            await tx.execute(sql`
              UPDATE ${keys} SET summary = ${JSON.stringify(summary)}
              WHERE project_key = ${stored.projectKey} AND session_id = ${stored.sessionId} AND subpath = ''`);
          }
          // The last moment to give up: past this, the batch is committed.
          throwIfAborted(signal, context);
        }),
      );
    },

    async load(key, { signal } = {}) {
      const stored = toStoredKey(key);
      return runDatabase(`session store load ${describeKey(stored)}`, signal, async () => {
        const rows = rowsOf(
          await db.execute(sql`
            SELECT entry FROM ${entries}
            WHERE project_key = ${stored.projectKey} AND session_id = ${stored.sessionId} AND subpath = ${stored.subpath}
            ORDER BY id`),
        );
        if (rows.length > 0) return rows.map((row) => JSON.parse(row.entry as string) as SessionStoreEntry);
        // No entries: an empty append still created the key ([]); a key never written is null.
        const present = rowsOf(
          await db.execute(sql`
            SELECT 1 AS present FROM ${keys}
            WHERE project_key = ${stored.projectKey} AND session_id = ${stored.sessionId} AND subpath = ${stored.subpath}`),
        );
        return present.length > 0 ? [] : null;
      });
    },

    async listSessions(projectKey, { signal } = {}) {
      assertStoreProjectKey(projectKey);
      return runDatabase(`session store listSessions ${projectKey}`, signal, async () =>
        rowsOf(
          await db.execute(sql`
            SELECT session_id, mtime FROM ${keys} WHERE project_key = ${projectKey} AND subpath = ''`),
        ).map((row) => ({ sessionId: row.session_id as string, mtime: Number(row.mtime) })),
      );
    },

    async listSessionSummaries(projectKey, { signal } = {}) {
      assertStoreProjectKey(projectKey);
      return runDatabase(`session store listSessionSummaries ${projectKey}`, signal, async () =>
        rowsOf(
          await db.execute(sql`
            SELECT summary FROM ${keys}
            WHERE project_key = ${projectKey} AND subpath = '' AND summary IS NOT NULL`),
        ).map((row) => JSON.parse(row.summary as string) as SessionSummaryEntry),
      );
    },

    async delete(key, { signal } = {}) {
      const stored = toStoredKey(key);
      const context = `session store delete ${describeKey(stored)}`;
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
