import { trashDaysOf } from "@stowage/core";
import type {
  CompleteSessionStore,
  SessionKey,
  SessionStoreDeleteOptions,
  SessionStorePayloadOptions,
  SessionStoreSeal,
  SessionStoreTrash,
} from "@stowage/sessions";
import {
  assertAgentSdkInstalled,
  describeSessionKey,
  entryPayloadsFrom,
  moveEntryPayloads,
  serializeEntries,
  toSessionScope,
  toStoredSessionKey,
} from "@stowage/sessions/backend";
import { assertDatabase, type StowageDatabase } from "../database.js";
import { batchParameters, type KnownHead } from "./session-store-batch.js";
import { listSessions, listSubkeys, listSummaries, loadEntries } from "./session-store-rows.js";
import { entryRows, sessionStoreSealFrom } from "./session-store-sealed-rows.js";
import {
  listTrashRows,
  purgeExpiredTrashRows,
  purgeTrashRows,
  restoreTrashRows,
} from "./session-store-trash.js";
import { appendBatch, deleteTranscript } from "./session-store-writes.js";

export interface PostgresSessionStoreOptions extends SessionStorePayloadOptions {
  /** A database with Stowage's tables: `connectPostgres`/`connectEmbedded`'s `db`, or the host's own. */
  db: StowageDatabase;
  /**
   * Days a `delete` keeps the transcript's rows in the trash tables, restorable, before
   * `purgeExpiredTrash` may delete them; `0` deletes at once. Default 7; 0 to 365.
   */
  trashDays?: number;
  /**
   * Seals the text of every row (encrypted at rest): each append's entries as one text in a row of
   * its own, and each key row's `summary`, bound to its transcript; `@stowage/tenancy`'s
   * `stowage.sessionStoreSeal(principal)`.
   * Keys, uuids, mtimes and the blob refs of moved payloads stay in clear. Default none: rows in
   * clear. A store without a seal refuses a sealed row (FORBIDDEN, `ROW_SEALED`); one with a seal
   * refuses a clear row (INTEGRITY, `ROW_NOT_SEALED`).
   */
  seal?: SessionStoreSeal;
}

/**
 * A Claude Agent SDK `SessionStore` with every optional method, plus `{ signal }` as a last
 * argument (which the SDK never passes; callers may), and its trash. Assignable to the SDK's own type.
 */
export interface PostgresSessionStore extends CompleteSessionStore, SessionStoreTrash {
  /** Into the trash for `trashDays` (the call's, else the store's). */
  delete(key: SessionKey, options?: SessionStoreDeleteOptions): Promise<void>;
}

/** Largest batch buffer a store keeps for reuse: a rare huge batch is not held for good. */
const MAX_SPARE_BYTES = 16 * 1024 * 1024;

/** Most main transcripts whose key row a store remembers (the oldest is forgotten first). */
const MAX_KNOWN_HEADS = 1024;

const isViewOf = (view: Buffer, whole: Buffer) =>
  view.buffer === whole.buffer && view.byteOffset === whole.byteOffset;

/**
 * The Claude Agent SDK's `SessionStore` on PostgreSQL (or PGlite): transcripts mirrored as rows,
 * `append` idempotent on `uuid` and order-preserving, `load` returning deep-equal entries or null,
 * summaries kept with the SDK's own `foldSessionSummary` inside the append transaction (which
 * holds the key's row lock, so concurrent appends to one session fold one after another), and
 * `delete` of a main transcript cascading to its subkeys. The SDK is an optional peer: it is
 * loaded on the first append, and a missing SDK fails here with UNAVAILABLE / PEER_MISSING.
 * Given `blobs`, images and documents in the entries are kept there once and the rows hold their
 * refs; `load` gives back the entries exactly as they were appended. Given `seal`, the text of
 * every entry and summary is stored sealed (see session-store-sealed-rows.ts).
 */
export function createPostgresSessionStore(options: PostgresSessionStoreOptions): PostgresSessionStore {
  const db = assertDatabase(options?.db, "createPostgresSessionStore");
  const payloads = entryPayloadsFrom(options, "createPostgresSessionStore");
  const storeTrashDays = trashDaysOf(options.trashDays);
  const rows = { db, seal: sessionStoreSealFrom(options.seal, "createPostgresSessionStore") };
  assertAgentSdkInstalled();
  // The buffer of the last batch, reused by the next append that finds it free: a new one of
  // megabytes per batch made V8 run full collections for the external memory alone.
  let spare: Buffer | undefined;
  const keepSpare = (used: Buffer | undefined) => {
    if (used && used.byteLength <= MAX_SPARE_BYTES && used.byteLength > (spare?.byteLength ?? -1))
      spare = used;
  };

  // The key row of each main transcript as this store's last append left it, so that the next
  // append to it can be one statement (see appendAhead). Only a hint: a row changed since by
  // anyone else is noticed by the statement, which then stores nothing.
  const knownHeads = new Map<string, KnownHead>();
  const headOf = (stored: { projectKey: string; sessionId: string }) =>
    `${stored.projectKey}\u0000${stored.sessionId}`;
  const remember = (name: string, head: KnownHead | undefined) => {
    knownHeads.delete(name);
    if (!head) return;
    if (knownHeads.size >= MAX_KNOWN_HEADS) knownHeads.delete(knownHeads.keys().next().value!);
    knownHeads.set(name, head);
  };

  return {
    async append(key, batch, { signal } = {}) {
      const stored = toStoredSessionKey(key);
      const serialized = serializeEntries(batch);
      // An empty batch changes nothing (the SDK's contract): a key never written stays null.
      if (serialized.length === 0) return;
      // Every blob is stored before a row that references it.
      if (payloads?.externalize) await moveEntryPayloads(payloads, batch, serialized, signal);
      const written = await entryRows(rows.seal, stored, serialized, signal);
      serialized.length = 0;
      const scratch = spare;
      spare = undefined;
      let lines: Buffer | undefined;
      try {
        const parameters = batchParameters(written, scratch);
        written.texts.length = 0;
        lines = parameters.lines;
        const context = `session store append ${describeSessionKey(stored)}`;
        const name = headOf(stored);
        const known = stored.subpath === "" ? knownHeads.get(name) : undefined;
        // Forgotten until the append is known to be committed.
        if (known) knownHeads.delete(name);
        const head = await appendBatch(rows, key, stored, batch, parameters, known, context, signal);
        if (stored.subpath === "") remember(name, head);
      } finally {
        // The transaction is over (or never began), so the driver is done with the bytes.
        keepSpare(!lines || (scratch && isViewOf(lines, scratch)) ? scratch : lines);
      }
    },

    // async: a key refused by the checks rejects the promise, it does not throw from the call.
    load: async (key, { signal } = {}) => loadEntries(rows, payloads, toStoredSessionKey(key), signal),
    listSessions: async (projectKey, { signal } = {}) => listSessions(db, projectKey, signal),
    listSessionSummaries: async (projectKey, { signal } = {}) => listSummaries(rows, projectKey, signal),

    async delete(key, { signal, trashDays } = {}) {
      const stored = toStoredSessionKey(key);
      const days = trashDaysOf(trashDays, storeTrashDays);
      if (stored.subpath === "") knownHeads.delete(headOf(stored));
      await deleteTranscript(db, stored, days, `session store delete ${describeSessionKey(stored)}`, signal);
    },

    listSubkeys: async (key, { signal } = {}) => listSubkeys(db, toSessionScope(key), signal),

    listTrash: async (projectKey, { signal } = {}) => listTrashRows(db, projectKey, signal),
    async restoreFromTrash(projectKey, trashId, { signal } = {}) {
      const restored = await restoreTrashRows(db, projectKey, trashId, signal);
      // Rows this store did not write: the next append to the key reads its head again.
      knownHeads.delete(headOf(restored));
      return restored;
    },
    purgeFromTrash: async (projectKey, trashId, { signal } = {}) =>
      purgeTrashRows(db, projectKey, trashId, signal),
    purgeExpiredTrash: async ({ signal, limit } = {}) => purgeExpiredTrashRows(db, limit, signal),
  };
}
