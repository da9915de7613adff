import { assertSessionId, throwIfAborted } from "@stowage/core";
import type {
  CreateSessionBlobInput,
  DeleteExpiredOptions,
  RepositoryOperationOptions,
  SessionBlobRecord,
} from "@stowage/sessions";
import {
  assertOwner,
  assertRequestId,
  normalizeCreateInput,
  resolveDeleteExpiredOptions,
} from "@stowage/sessions/backend";
import { and, eq, sql } from "drizzle-orm";
import { rowsOf } from "../database.js";
import { runDatabase } from "../run-database.js";
import { agentSessions } from "../schema.js";
import type { SessionBlobsContext } from "./session-blobs-context.js";

/** Stores a session blob, checked and read through first; upserts on (owner, request id, session id). */
export async function createSessionBlob(
  { db, limits }: SessionBlobsContext,
  input: CreateSessionBlobInput,
  { signal }: RepositoryOperationOptions = {},
): Promise<SessionBlobRecord> {
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
        storedBytes: valid.storedBytes,
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
          storedBytes: sql`excluded.stored_bytes`,
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
      storedBytes: valid.storedBytes,
      createdAt: row!.createdAt,
      expiresAt: row!.expiresAt,
    };
  });
}

/** Deletes expired rows of every owner in bounded batches; returns how many went. */
export async function deleteExpiredSessionBlobs(
  { db }: SessionBlobsContext,
  options: DeleteExpiredOptions = {},
): Promise<number> {
  const { batchSize, maxBatches } = resolveDeleteExpiredOptions(options);
  const { signal } = options;
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
}

export async function deleteSessionBlobsForRequest(
  { db }: SessionBlobsContext,
  owner: string,
  requestId: string,
  { signal }: RepositoryOperationOptions = {},
): Promise<number> {
  assertOwner(owner);
  assertRequestId(requestId);
  return runDatabase(`delete session blobs for request ${requestId}`, signal, async () => {
    const rows = await db
      .delete(agentSessions)
      .where(and(eq(agentSessions.owner, owner), eq(agentSessions.requestId, requestId)))
      .returning({ id: agentSessions.id });
    return rows.length;
  });
}

export async function deleteSessionBlobsOfSession(
  { db }: SessionBlobsContext,
  owner: string,
  sessionId: string,
  { signal }: RepositoryOperationOptions = {},
): Promise<number> {
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
}
