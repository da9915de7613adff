import { assertSafeId, throwIfAborted } from "@stowage/core";
import { assertSessionId } from "../agents/session-id.js";
import type {
  CreateSessionBlobInput,
  CreateSessionBlobOptions,
  DeleteExpiredOptions,
  ExpiredSessionBlob,
  SessionBlobRecord,
  SessionBlobRepository,
  SessionBlobSummary,
} from "./session-blob-repository.js";
import {
  assertLaterExpiry,
  assertOwner,
  assertRequestId,
  normalizeCreateInput,
  resolveDeleteExpiredOptions,
  resolveListSessionBlobsOptions,
  resolveSessionBlobLimits,
  type SessionBlobLimits,
} from "./validate-input.js";

export interface MemorySessionBlobsOptions extends SessionBlobLimits {
  /** The clock; tests pass their own. Default `() => new Date()`. */
  now?: () => Date;
}

const copy = (record: SessionBlobRecord): SessionBlobRecord => ({
  ...record,
  blob: record.blob.slice(),
  createdAt: new Date(record.createdAt),
  expiresAt: record.expiresAt && new Date(record.expiresAt),
});

const expiredSummary = (record: SessionBlobRecord): ExpiredSessionBlob => ({
  id: record.id,
  owner: record.owner,
  requestId: record.requestId,
  sessionId: record.sessionId,
  blobSizeBytes: record.blobSizeBytes,
  storedBytes: record.storedBytes,
  expiresAt: record.expiresAt && new Date(record.expiresAt),
});

/**
 * Sets the expiry of the owner's records of a session id that `which` takes (its live ones, or its
 * expired ones: a restore from the trash) to `expiresAt`, after `at`; how many changed.
 */
async function setExpiry(
  records: Iterable<SessionBlobRecord>,
  change: { owner: string; sessionId: string; expiresAt: Date; at: Date; signal: AbortSignal | undefined },
  which: (record: SessionBlobRecord) => boolean,
): Promise<number> {
  const { owner, sessionId, expiresAt, at, signal } = change;
  assertOwner(owner);
  assertSessionId(sessionId);
  assertLaterExpiry(expiresAt, at);
  throwIfAborted(signal, "set session blob expiry");
  let changed = 0;
  for (const record of records) {
    if (record.owner !== owner || record.sessionId !== sessionId || !which(record)) continue;
    record.expiresAt = new Date(expiresAt);
    delete record.trashedBy;
    changed++;
  }
  return changed;
}

/** Expires the owner's live records of a request at `at`, recording who deleted them; how many changed. */
async function expireForRequest(
  records: Iterable<SessionBlobRecord>,
  change: { owner: string; requestId: string; trashedBy: string; at: Date; signal: AbortSignal | undefined },
  live: (record: SessionBlobRecord) => boolean,
): Promise<number> {
  const { owner, requestId, trashedBy, at, signal } = change;
  assertOwner(owner);
  assertRequestId(requestId);
  assertSafeId(trashedBy, "trashed by");
  throwIfAborted(signal, "expire session blobs");
  let changed = 0;
  for (const record of records) {
    if (record.owner !== owner || record.requestId !== requestId || !live(record)) continue;
    record.expiresAt = at;
    record.trashedBy = trashedBy;
    changed++;
  }
  return changed;
}

/** Deletes every record `match` takes; how many went. */
function deleteWhere(
  records: Map<number, SessionBlobRecord>,
  match: (record: SessionBlobRecord) => boolean,
): number {
  let deleted = 0;
  for (const record of [...records.values()]) if (match(record) && records.delete(record.id)) deleted++;
  return deleted;
}

/** The reference {@link SessionBlobRepository}, in memory: for tests and single-process tools. */
export function createMemorySessionBlobRepository(
  options: MemorySessionBlobsOptions = {},
): SessionBlobRepository {
  const limits = resolveSessionBlobLimits(options);
  const now = options.now ?? (() => new Date());
  const records = new Map<number, SessionBlobRecord>();
  let nextId = 1;
  const live = (record: SessionBlobRecord) => record.expiresAt === null || record.expiresAt > now();
  const latest = (match: (record: SessionBlobRecord) => boolean) => {
    let best: SessionBlobRecord | undefined;
    for (const record of records.values()) {
      if (!match(record) || !live(record)) continue;
      if (
        !best ||
        record.createdAt > best.createdAt ||
        (+record.createdAt === +best.createdAt && record.id > best.id)
      ) {
        best = record;
      }
    }
    return best ? copy(best) : null;
  };

  return {
    async create(input: CreateSessionBlobInput, { signal, preverified }: CreateSessionBlobOptions = {}) {
      const at = now();
      const valid = await normalizeCreateInput(input, limits, at, {
        ...(signal ? { signal } : {}),
        preverified,
      });
      throwIfAborted(signal, "create session blob");
      const existing = [...records.values()].find(
        (record) =>
          record.owner === valid.owner &&
          record.requestId === valid.requestId &&
          record.sessionId === valid.sessionId,
      );
      const record: SessionBlobRecord = {
        id: existing?.id ?? nextId++,
        owner: valid.owner,
        requestId: valid.requestId,
        sessionId: valid.sessionId,
        agentType: valid.agentType,
        codec: valid.codec,
        blob: valid.blob.slice(),
        blobSizeBytes: valid.blob.byteLength,
        rawSizeBytes: valid.rawSizeBytes,
        storedBytes: valid.storedBytes,
        createdAt: at,
        expiresAt: valid.expiresAt,
      };
      records.set(record.id, record);
      return copy(record);
    },
    async getLatestForRequest(owner, requestId, { signal } = {}) {
      assertOwner(owner);
      assertRequestId(requestId);
      throwIfAborted(signal, "get session blob");
      return latest((record) => record.owner === owner && record.requestId === requestId);
    },
    async getBySessionId(owner, sessionId, { signal } = {}) {
      assertOwner(owner);
      assertSessionId(sessionId);
      throwIfAborted(signal, "get session blob");
      return latest((record) => record.owner === owner && record.sessionId === sessionId);
    },
    async deleteExpired(deleteOptions: DeleteExpiredOptions = {}) {
      const { batchSize, maxBatches, graceMs } = resolveDeleteExpiredOptions(deleteOptions);
      let deleted = 0;
      for (let batch = 0; batch < maxBatches; batch++) {
        throwIfAborted(deleteOptions.signal, "delete expired session blobs");
        const before = now().getTime() - graceMs;
        const expired = [...records.values()]
          .filter((record) => record.expiresAt !== null && record.expiresAt.getTime() <= before)
          .slice(0, batchSize);
        for (const record of expired) records.delete(record.id);
        deleted += expired.length;
        if (expired.length > 0) await deleteOptions.onDeleted?.(expired.map(expiredSummary));
        if (expired.length < batchSize) break;
      }
      return deleted;
    },
    extendExpiry: (owner, sessionId, expiresAt, { signal } = {}) =>
      setExpiry(records.values(), { owner, sessionId, expiresAt, at: now(), signal }, live),
    restoreExpired: (owner, sessionId, expiresAt, { signal } = {}) =>
      setExpiry(
        records.values(),
        { owner, sessionId, expiresAt, at: now(), signal },
        (record) => !live(record),
      ),
    async purgeExpired(owner, sessionId, { signal } = {}) {
      assertOwner(owner);
      assertSessionId(sessionId);
      throwIfAborted(signal, "purge expired session blobs");
      return deleteWhere(
        records,
        (record) => record.owner === owner && record.sessionId === sessionId && !live(record),
      );
    },
    expireForRequest: (owner, requestId, trashedBy, { signal } = {}) =>
      expireForRequest(records.values(), { owner, requestId, trashedBy, at: now(), signal }, live),
    async deleteForRequest(owner, requestId, { signal } = {}) {
      assertOwner(owner);
      assertRequestId(requestId);
      throwIfAborted(signal, "delete session blobs");
      return deleteWhere(records, (record) => record.owner === owner && record.requestId === requestId);
    },
    async deleteForSession(owner, sessionId, { signal } = {}) {
      assertOwner(owner);
      assertSessionId(sessionId);
      throwIfAborted(signal, "delete session blobs");
      return deleteWhere(records, (record) => record.owner === owner && record.sessionId === sessionId);
    },
    async list(listOptions = {}) {
      const { afterId, limit } = resolveListSessionBlobsOptions(listOptions);
      throwIfAborted(listOptions.signal, "list session blobs");
      // Ids are handed out in increasing order and a Map keeps insertion order: already sorted.
      const page: SessionBlobRecord[] = [];
      for (const record of records.values()) {
        // Expired records too: stored until deleteExpired removes them (a restore may want them).
        if (record.id <= afterId) continue;
        if (page.length === limit) return { records: page, cursor: String(page[limit - 1]!.id) };
        page.push(copy(record));
      }
      return { records: page };
    },
    async listByOwner(owner, listOptions = {}) {
      assertOwner(owner);
      const { afterId, limit, expired } = resolveListSessionBlobsOptions(listOptions);
      throwIfAborted(listOptions.signal, "list session blobs");
      const sessions: SessionBlobSummary[] = [];
      for (const record of records.values()) {
        if (record.id <= afterId || record.owner !== owner || live(record) === expired) continue;
        if (sessions.length === limit) return { sessions, cursor: String(sessions[limit - 1]!.id) };
        const { blob: _blob, ...summary } = copy(record);
        sessions.push(summary);
      }
      return { sessions };
    },
  };
}
