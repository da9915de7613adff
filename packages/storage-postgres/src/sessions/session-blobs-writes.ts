import { assertSafeId, assertSessionId, throwIfAborted } from "@stowage/core";
import type {
  CreateSessionBlobInput,
  CreateSessionBlobOptions,
  DeleteExpiredOptions,
  ExpiredSessionBlob,
  RepositoryOperationOptions,
  SessionBlobRecord,
} from "@stowage/sessions";
import {
  assertLaterExpiry,
  assertOwner,
  assertRequestId,
  normalizeCreateInput,
  resolveDeleteExpiredOptions,
} from "@stowage/sessions/backend";
import { and, eq, sql } from "drizzle-orm";
import { rowsOf } from "../database.js";
import { runDatabase } from "../run-database.js";
import { agentSessions } from "../schema.js";
import { expired, live, type SessionBlobsContext } from "./session-blobs-context.js";

/** Stores a session blob, checked and read through first; upserts on (owner, request id, session id). */
export async function createSessionBlob(
  { db, limits }: SessionBlobsContext,
  input: CreateSessionBlobInput,
  { signal, preverified }: CreateSessionBlobOptions = {},
): Promise<SessionBlobRecord> {
  const valid = await normalizeCreateInput(input, limits, new Date(), {
    ...(signal ? { signal } : {}),
    preverified,
  });
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
          trashedBy: null,
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

/** A `RETURNING` row of a deleted expired record, as `onDeleted` is told of it. */
function expiredOf(row: Record<string, unknown>): ExpiredSessionBlob {
  return {
    id: Number(row.id),
    owner: String(row.owner),
    requestId: String(row.request_id),
    sessionId: String(row.session_id),
    blobSizeBytes: Number(row.blob_size_bytes),
    // A row stored before stored_bytes existed holds null: its blob was all it added.
    storedBytes: Number(row.stored_bytes ?? row.blob_size_bytes),
    expiresAt: row.expires_at === null ? null : new Date(row.expires_at as string | Date),
  };
}

/** Deletes expired rows of every owner in bounded batches; returns how many went. */
export async function deleteExpiredSessionBlobs(
  { db }: SessionBlobsContext,
  options: DeleteExpiredOptions = {},
): Promise<number> {
  const { batchSize, maxBatches, graceMs } = resolveDeleteExpiredOptions(options);
  const { signal, onDeleted } = options;
  let deleted = 0;
  for (let batch = 0; batch < maxBatches; batch++) {
    throwIfAborted(signal, "delete expired session blobs");
    // One bounded statement per batch: short locks, and SKIP LOCKED lets two cleaners share. Each
    // deleted row comes back (never its blob) for the caller's audit.
    const result = await runDatabase("delete expired session blobs", signal, () =>
      db.execute(sql`
        WITH doomed AS (
          SELECT ${agentSessions.id} AS id FROM ${agentSessions}
          WHERE ${agentSessions.expiresAt} IS NOT NULL
            AND ${agentSessions.expiresAt} <= now() - ${graceMs}::double precision * interval '1 millisecond'
          ORDER BY ${agentSessions.expiresAt}
          LIMIT ${batchSize}
          FOR UPDATE SKIP LOCKED
        )
        DELETE FROM ${agentSessions} WHERE ${agentSessions.id} IN (SELECT id FROM doomed)
        RETURNING id, owner, request_id, session_id, blob_size_bytes, stored_bytes, expires_at`),
    );
    const rows = rowsOf(result) as Record<string, unknown>[];
    deleted += rows.length;
    if (rows.length > 0) await onDeleted?.(rows.map(expiredOf));
    if (rows.length < batchSize) break;
  }
  return deleted;
}

/**
 * Sets the expiry of the owner's rows of a session id that `which` takes (its live rows, or its
 * expired ones not yet deleted: a restore from the trash), after now; how many changed.
 */
export async function setSessionBlobExpiry(
  { db }: SessionBlobsContext,
  owner: string,
  sessionId: string,
  expiresAt: Date,
  which: "live" | "expired",
  { signal }: RepositoryOperationOptions = {},
): Promise<number> {
  assertOwner(owner);
  assertSessionId(sessionId);
  assertLaterExpiry(expiresAt, new Date());
  return runDatabase(`set the expiry of session ${sessionId}`, signal, async () => {
    const rows = await db
      .update(agentSessions)
      .set({ expiresAt, trashedBy: null })
      .where(
        and(
          eq(agentSessions.owner, owner),
          eq(agentSessions.sessionId, sessionId),
          which === "live" ? live : expired,
        ),
      )
      .returning({ id: agentSessions.id });
    return rows.length;
  });
}

/** Expires the owner's live rows of a request now (the database's clock), saying who; how many changed. */
export async function expireSessionBlobsForRequest(
  { db }: SessionBlobsContext,
  owner: string,
  requestId: string,
  trashedBy: string,
  { signal }: RepositoryOperationOptions = {},
): Promise<number> {
  assertOwner(owner);
  assertRequestId(requestId);
  assertSafeId(trashedBy, "trashed by");
  return runDatabase(`expire session blobs for request ${requestId}`, signal, async () => {
    const rows = await db
      .update(agentSessions)
      .set({ expiresAt: sql`now()`, trashedBy })
      .where(and(eq(agentSessions.owner, owner), eq(agentSessions.requestId, requestId), live))
      .returning({ id: agentSessions.id });
    return rows.length;
  });
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

/**
 * Deletes the owner's rows of a session id, whatever request they were stored for: all of them, or
 * only the expired ones (a purge from the trash, which leaves a capture stored since); how many went.
 */
export async function deleteSessionBlobsOfSession(
  { db }: SessionBlobsContext,
  owner: string,
  sessionId: string,
  which: "all" | "expired",
  { signal }: RepositoryOperationOptions = {},
): Promise<number> {
  assertOwner(owner);
  assertSessionId(sessionId);
  return runDatabase(
    `delete ${which === "all" ? "" : "the expired "}session blobs of session ${sessionId}`,
    signal,
    async () => {
      // One statement on the (owner, session_id) index: only this session's rows, whatever request.
      const ofSession = and(eq(agentSessions.owner, owner), eq(agentSessions.sessionId, sessionId));
      const rows = await db
        .delete(agentSessions)
        .where(which === "all" ? ofSession : and(ofSession, expired))
        .returning({ id: agentSessions.id });
      return rows.length;
    },
  );
}
