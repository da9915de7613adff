import type { SessionBlobLimits, SessionBlobRecord, SessionCodec } from "@stowage/sessions";
import { and, gt, isNotNull, isNull, lte, or, sql } from "drizzle-orm";
import { plainBytes, type StowageDatabase } from "../database.js";
import { agentSessions } from "../schema.js";

/** What every operation of one session blob repository works with: its options, checked. */
export interface SessionBlobsContext {
  db: StowageDatabase;
  limits: Required<SessionBlobLimits>;
}

/** Rows not yet expired (a row without `expires_at` never expires). */
export const live = or(isNull(agentSessions.expiresAt), gt(agentSessions.expiresAt, sql`now()`));

/** Rows expired and not yet deleted: the trash of stored sessions, while their grace lasts. */
export const expired = and(isNotNull(agentSessions.expiresAt), lte(agentSessions.expiresAt, sql`now()`));

/** A row as the repository contract's record, the blob as a plain Uint8Array view. */
export function toRecord(row: typeof agentSessions.$inferSelect): SessionBlobRecord {
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
    storedBytes: row.storedBytes ?? row.blobSizeBytes,
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
    ...trashedByOf(row),
  };
}

/** `trashedBy` as the contract has it: present only when someone deleted the row. */
export function trashedByOf(row: { trashedBy: string | null }): { trashedBy?: string } {
  return row.trashedBy === null ? {} : { trashedBy: row.trashedBy };
}
