import { throwIfAborted } from "@stowage/core";
import {
  assertSessionId,
  type CreateSessionBlobInput,
  type SessionBlobLimits,
  type SessionBlobRecord,
  type SessionBlobRepository,
  type SessionCodec,
} from "@stowage/sessions";
import {
  assertOwner,
  assertRequestId,
  normalizeCreateInput,
  resolveDeleteExpiredOptions,
  resolveListSessionBlobsOptions,
  resolveSessionBlobLimits,
} from "@stowage/sessions/backend";
import { and, asc, desc, eq, getTableColumns, gt, isNull, or, type SQL, sql } from "drizzle-orm";
import { assertDatabase, plainBytes, rowsOf, type StowageDatabase } from "./database.js";
import { runDatabase } from "./run-database.js";
import { agentSessions } from "./schema.js";

export interface PostgresSessionBlobsOptions extends SessionBlobLimits {
  /** A database with Stowage's tables: `connectPostgres`/`connectEmbedded`'s `db`, or the host's own. */
  db: StowageDatabase;
}

const live = or(isNull(agentSessions.expiresAt), gt(agentSessions.expiresAt, sql`now()`));

type Row = typeof agentSessions.$inferSelect;

function toRecord(row: Row): SessionBlobRecord {
  return {
    id: row.id,
    owner: row.owner,
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
 * The session blob repository of `@stowage/sessions` on the `agent_sessions` table: every row
 * has an owner and every read and delete is made inside one (another owner's ids read as absent);
 * upsert on (owner, request id, session id), a default TTL of 7 days, expired rows never returned
 * and deleted in bounded batches, whoever owns them.
 */
export function createPostgresSessionBlobs(options: PostgresSessionBlobsOptions): SessionBlobRepository {
  const db = assertDatabase(options?.db, "createPostgresSessionBlobs");
  const limits = resolveSessionBlobLimits({
    ...(options.ttlMs === undefined ? {} : { ttlMs: options.ttlMs }),
    ...(options.maxBlobBytes === undefined ? {} : { maxBlobBytes: options.maxBlobBytes }),
  });

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
      const valid = await normalizeCreateInput(input, limits, new Date(), signal ? { signal } : {});
      return runDatabase(`create session blob for request ${valid.requestId}`, signal, async () => {
        // The blob is not sent back: the caller has it, and a 4 MB echo would double the cost.
        const [row] = await db
          .insert(agentSessions)
          .values({
            owner: valid.owner,
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
            target: [agentSessions.owner, agentSessions.requestId, agentSessions.sessionId],
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
          owner: valid.owner,
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

    async getLatestForRequest(owner, requestId, { signal } = {}) {
      assertOwner(owner);
      assertRequestId(requestId);
      return latest(
        and(eq(agentSessions.owner, owner), eq(agentSessions.requestId, requestId)),
        signal,
        `get session blob for request ${requestId}`,
      );
    },

    async getBySessionId(owner, sessionId, { signal } = {}) {
      assertOwner(owner);
      assertSessionId(sessionId);
      return latest(
        and(eq(agentSessions.owner, owner), eq(agentSessions.sessionId, sessionId)),
        signal,
        `get session blob ${sessionId}`,
      );
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

    async deleteForRequest(owner, requestId, { signal } = {}) {
      assertOwner(owner);
      assertRequestId(requestId);
      return runDatabase(`delete session blobs for request ${requestId}`, signal, async () => {
        const rows = await db
          .delete(agentSessions)
          .where(and(eq(agentSessions.owner, owner), eq(agentSessions.requestId, requestId)))
          .returning({ id: agentSessions.id });
        return rows.length;
      });
    },

    async deleteForSession(owner, sessionId, { signal } = {}) {
      assertOwner(owner);
      assertSessionId(sessionId);
      return runDatabase(`delete session blobs of session ${sessionId}`, signal, async () => {
        // One statement on the (owner, session_id) index: only this session's rows, whatever request.
        const rows = await db
          .delete(agentSessions)
          .where(and(eq(agentSessions.owner, owner), eq(agentSessions.sessionId, sessionId)))
          .returning({ id: agentSessions.id });
        return rows.length;
      });
    },

    async list(listOptions = {}) {
      const { afterId, limit } = resolveListSessionBlobsOptions(listOptions);
      return runDatabase("list session blobs", listOptions.signal, async () => {
        // Paged on the primary key: each page is an index range scan, however many rows there are.
        // No extra row is read to learn whether more follow (it would be a whole blob): a full
        // page carries a cursor, and the listing ends with the first page that is not full.
        const rows = await db
          .select()
          .from(agentSessions)
          .where(and(gt(agentSessions.id, afterId), live))
          .orderBy(asc(agentSessions.id))
          .limit(limit);
        const records = rows.map(toRecord);
        return records.length === limit ? { records, cursor: String(records[limit - 1]!.id) } : { records };
      });
    },

    async listByOwner(owner, listOptions = {}) {
      assertOwner(owner);
      const { afterId, limit } = resolveListSessionBlobsOptions(listOptions);
      return runDatabase("list session blobs", listOptions.signal, async () => {
        // Every column but the blob; one row more than the page tells whether another follows.
        const { sessionBlob: _blob, ...columns } = getTableColumns(agentSessions);
        const rows = await db
          .select(columns)
          .from(agentSessions)
          .where(and(eq(agentSessions.owner, owner), gt(agentSessions.id, afterId), live))
          .orderBy(asc(agentSessions.id))
          .limit(limit + 1);
        const sessions = rows.slice(0, limit).map((row) => ({
          ...row,
          codec: row.codec as SessionCodec,
        }));
        return rows.length > limit ? { sessions, cursor: String(sessions[limit - 1]!.id) } : { sessions };
      });
    },
  };
}
