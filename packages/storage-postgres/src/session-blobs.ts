import { throwIfAborted } from "@stowage/core";
import {
  assertRequestId,
  assertSessionId,
  type CreateSessionBlobInput,
  normalizeCreateInput,
  resolveDeleteExpiredOptions,
  resolveSessionBlobLimits,
  type SessionBlobLimits,
  type SessionBlobRecord,
  type SessionBlobRepository,
  type SessionCodec,
} from "@stowage/sessions";
import { and, desc, eq, gt, isNull, or, type SQL, sql } from "drizzle-orm";
import { plainBytes, rowsOf, type StowageDatabase } from "./database.js";
import { runDatabase } from "./run-database.js";
import { agentSessions } from "./schema.js";

export type PostgresSessionBlobsOptions = SessionBlobLimits;

const live = or(isNull(agentSessions.expiresAt), gt(agentSessions.expiresAt, sql`now()`));

type Row = typeof agentSessions.$inferSelect;

function toRecord(row: Row): SessionBlobRecord {
  return {
    id: row.id,
    requestId: row.requestId,
    sessionId: row.sessionId,
    agentType: row.agentType,
    codec: row.codec as SessionCodec,
    blob: plainBytes(row.sessionBlob),
    blobSizeBytes: row.blobSizeBytes,
    rawSizeBytes: row.rawSizeBytes,
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
  };
}

/**
 * The session blob repository of `@stowage/sessions` on the `agent_sessions` table: upsert on
 * (request id, session id), a default TTL of 7 days, expired rows never returned and deleted in
 * bounded batches.
 */
export function createPostgresSessionBlobs(
  db: StowageDatabase,
  options: PostgresSessionBlobsOptions = {},
): SessionBlobRepository {
  const limits = resolveSessionBlobLimits(options);

  const latest = (where: SQL | undefined, signal: AbortSignal | undefined, context: string) =>
    runDatabase(context, signal, async () => {
      const rows = await db
        .select()
        .from(agentSessions)
        .where(and(where, live))
        .orderBy(desc(agentSessions.createdAt), desc(agentSessions.id))
        .limit(1);
      return rows[0] ? toRecord(rows[0]) : null;
    });

  return {
    async create(input: CreateSessionBlobInput, { signal } = {}) {
      const valid = normalizeCreateInput(input, limits, new Date());
      return runDatabase(`create session blob for request ${valid.requestId}`, signal, async () => {
        // The blob is not sent back: the caller has it, and a 4 MB echo would double the cost.
        const [row] = await db
          .insert(agentSessions)
          .values({
            requestId: valid.requestId,
            sessionId: valid.sessionId,
            agentType: valid.agentType,
            sessionBlob: valid.blob,
            blobSizeBytes: valid.blob.byteLength,
            codec: valid.codec,
            rawSizeBytes: valid.rawSizeBytes,
            expiresAt: valid.expiresAt,
          })
          .onConflictDoUpdate({
            target: [agentSessions.requestId, agentSessions.sessionId],
            set: {
              agentType: sql`excluded.agent_type`,
              sessionBlob: sql`excluded.session_blob`,
              blobSizeBytes: sql`excluded.blob_size_bytes`,
              codec: sql`excluded.codec`,
              rawSizeBytes: sql`excluded.raw_size_bytes`,
              expiresAt: sql`excluded.expires_at`,
              createdAt: sql`now()`,
            },
          })
          .returning({
            id: agentSessions.id,
            createdAt: agentSessions.createdAt,
            expiresAt: agentSessions.expiresAt,
          });
        return {
          id: row!.id,
          requestId: valid.requestId,
          sessionId: valid.sessionId,
          agentType: valid.agentType,
          codec: valid.codec,
          // The caller's bytes, as stored; not copied.
          blob: valid.blob,
          blobSizeBytes: valid.blob.byteLength,
          rawSizeBytes: valid.rawSizeBytes,
          createdAt: row!.createdAt,
          expiresAt: row!.expiresAt,
        };
      });
    },

    async getLatestForRequest(requestId, { signal } = {}) {
      assertRequestId(requestId);
      return latest(
        eq(agentSessions.requestId, requestId),
        signal,
        `get session blob for request ${requestId}`,
      );
    },

    async getBySessionId(sessionId, { signal } = {}) {
      assertSessionId(sessionId);
      return latest(eq(agentSessions.sessionId, sessionId), signal, `get session blob ${sessionId}`);
    },

    async deleteExpired(deleteOptions = {}) {
      const { batchSize, maxBatches } = resolveDeleteExpiredOptions(deleteOptions);
      const { signal } = deleteOptions;
      let deleted = 0;
      for (let batch = 0; batch < maxBatches; batch++) {
        throwIfAborted(signal, "delete expired session blobs");
        // One bounded statement per batch: short locks, and SKIP LOCKED lets two cleaners share.
        const result = await runDatabase("delete expired session blobs", signal, () =>
          db.execute(sql`
            WITH doomed AS (
              SELECT ${agentSessions.id} AS id FROM ${agentSessions}
              WHERE ${agentSessions.expiresAt} IS NOT NULL AND ${agentSessions.expiresAt} <= now()
              ORDER BY ${agentSessions.expiresAt}
              LIMIT ${batchSize}
              FOR UPDATE SKIP LOCKED
            ), gone AS (
              DELETE FROM ${agentSessions} WHERE ${agentSessions.id} IN (SELECT id FROM doomed) RETURNING 1
            )
            SELECT count(*)::int AS count FROM gone`),
        );
        const count = Number(rowsOf(result)[0]?.count ?? 0);
        deleted += count;
        if (count < batchSize) break;
      }
      return deleted;
    },

    async deleteForRequest(requestId, { signal } = {}) {
      assertRequestId(requestId);
      return runDatabase(`delete session blobs for request ${requestId}`, signal, async () => {
        const rows = await db
          .delete(agentSessions)
          .where(eq(agentSessions.requestId, requestId))
          .returning({ id: agentSessions.id });
        return rows.length;
      });
    },
  };
}
