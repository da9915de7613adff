import { throwIfAborted } from "@stowage/core";
import { assertSessionId } from "../claude/session-id.js";
import type {
  CreateSessionBlobInput,
  DeleteExpiredOptions,
  RepositoryOperationOptions,
  SessionBlobRecord,
  SessionBlobRepository,
} from "./session-blob-repository.js";
import {
  assertRequestId,
  normalizeCreateInput,
  resolveDeleteExpiredOptions,
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
    async create(input: CreateSessionBlobInput, { signal }: RepositoryOperationOptions = {}) {
      const at = now();
      const valid = normalizeCreateInput(input, limits, at);
      throwIfAborted(signal, "create session blob");
      const existing = [...records.values()].find(
        (record) => record.requestId === valid.requestId && record.sessionId === valid.sessionId,
      );
      const record: SessionBlobRecord = {
        id: existing?.id ?? nextId++,
        requestId: valid.requestId,
        sessionId: valid.sessionId,
        agentType: valid.agentType,
        codec: valid.codec,
        blob: valid.blob.slice(),
        blobSizeBytes: valid.blob.byteLength,
        rawSizeBytes: valid.rawSizeBytes,
        createdAt: at,
        expiresAt: valid.expiresAt,
      };
      records.set(record.id, record);
      return copy(record);
    },
    async getLatestForRequest(requestId, { signal } = {}) {
      assertRequestId(requestId);
      throwIfAborted(signal, "get session blob");
      return latest((record) => record.requestId === requestId);
    },
    async getBySessionId(sessionId, { signal } = {}) {
      assertSessionId(sessionId);
      throwIfAborted(signal, "get session blob");
      return latest((record) => record.sessionId === sessionId);
    },
    async deleteExpired(deleteOptions: DeleteExpiredOptions = {}) {
      const { batchSize, maxBatches } = resolveDeleteExpiredOptions(deleteOptions);
      let deleted = 0;
      for (let batch = 0; batch < maxBatches; batch++) {
        throwIfAborted(deleteOptions.signal, "delete expired session blobs");
        const expired = [...records.values()].filter((record) => !live(record)).slice(0, batchSize);
        for (const record of expired) records.delete(record.id);
        deleted += expired.length;
        if (expired.length < batchSize) break;
      }
      return deleted;
    },
    async deleteForRequest(requestId, { signal } = {}) {
      assertRequestId(requestId);
      throwIfAborted(signal, "delete session blobs");
      let deleted = 0;
      for (const record of [...records.values()]) {
        if (record.requestId === requestId && records.delete(record.id)) deleted++;
      }
      return deleted;
    },
  };
}
