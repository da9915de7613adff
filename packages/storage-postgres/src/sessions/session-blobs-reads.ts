import { assertSessionId } from "@stowage/core";
import type {
  ListOwnedSessionBlobsOptions,
  ListSessionBlobsOptions,
  RepositoryOperationOptions,
  SessionBlobPage,
  SessionBlobRecord,
  SessionBlobSummaryPage,
  SessionCodec,
} from "@stowage/sessions";
import { assertOwner, assertRequestId, resolveListSessionBlobsOptions } from "@stowage/sessions/backend";
import { and, asc, desc, eq, getTableColumns, gt, type SQL } from "drizzle-orm";
import { runDatabase } from "../run-database.js";
import { agentSessions } from "../schema.js";
import { expired, live, type SessionBlobsContext, toRecord, trashedByOf } from "./session-blobs-context.js";

/** The latest live record that `where` selects, or null. */
async function latest(
  { db }: SessionBlobsContext,
  where: SQL | undefined,
  signal: AbortSignal | undefined,
  context: string,
): Promise<SessionBlobRecord | null> {
  return runDatabase(context, signal, async () => {
    const rows = await db
      .select()
      .from(agentSessions)
      .where(and(where, live))
      .orderBy(desc(agentSessions.createdAt), desc(agentSessions.id))
      .limit(1);
    return rows[0] ? toRecord(rows[0]) : null;
  });
}

export async function getLatestForRequest(
  context: SessionBlobsContext,
  owner: string,
  requestId: string,
  { signal }: RepositoryOperationOptions = {},
): Promise<SessionBlobRecord | null> {
  assertOwner(owner);
  assertRequestId(requestId);
  return latest(
    context,
    and(eq(agentSessions.owner, owner), eq(agentSessions.requestId, requestId)),
    signal,
    `get session blob for request ${requestId}`,
  );
}

export async function getBySessionId(
  context: SessionBlobsContext,
  owner: string,
  sessionId: string,
  { signal }: RepositoryOperationOptions = {},
): Promise<SessionBlobRecord | null> {
  assertOwner(owner);
  assertSessionId(sessionId);
  return latest(
    context,
    and(eq(agentSessions.owner, owner), eq(agentSessions.sessionId, sessionId)),
    signal,
    `get session blob ${sessionId}`,
  );
}

/** Every owner's stored records (expired ones not yet deleted too), a page at a time in id order. */
export async function listSessionBlobs(
  { db }: SessionBlobsContext,
  options: ListSessionBlobsOptions = {},
): Promise<SessionBlobPage> {
  const { afterId, limit } = resolveListSessionBlobsOptions(options);
  return runDatabase("list session blobs", options.signal, async () => {
    // Paged on the primary key: each page is an index range scan, however many rows there are.
    // No extra row is read to learn whether more follow (it would be a whole blob): a full
    // page carries a cursor, and the listing ends with the first page that is not full.
    const rows = await db
      .select()
      .from(agentSessions)
      .where(gt(agentSessions.id, afterId))
      .orderBy(asc(agentSessions.id))
      .limit(limit);
    const records = rows.map(toRecord);
    return records.length === limit ? { records, cursor: String(records[limit - 1]!.id) } : { records };
  });
}

/** One owner's live (or expired, not yet deleted) records without their blobs, a page at a time in id order. */
export async function listSessionBlobsByOwner(
  { db }: SessionBlobsContext,
  owner: string,
  options: ListOwnedSessionBlobsOptions = {},
): Promise<SessionBlobSummaryPage> {
  assertOwner(owner);
  const { afterId, limit, expired: listExpired } = resolveListSessionBlobsOptions(options);
  return runDatabase("list session blobs", options.signal, async () => {
    // Every column but the blob; one row more than the page tells whether another follows.
    const { sessionBlob: _blob, ...columns } = getTableColumns(agentSessions);
    const rows = await db
      .select(columns)
      .from(agentSessions)
      .where(and(eq(agentSessions.owner, owner), gt(agentSessions.id, afterId), listExpired ? expired : live))
      .orderBy(asc(agentSessions.id))
      .limit(limit + 1);
    const sessions = rows.slice(0, limit).map(({ trashedBy, ...row }) => ({
      ...row,
      codec: row.codec as SessionCodec,
      storedBytes: row.storedBytes ?? row.blobSizeBytes,
      ...trashedByOf({ trashedBy }),
    }));
    return rows.length > limit ? { sessions, cursor: String(sessions[limit - 1]!.id) } : { sessions };
  });
}
