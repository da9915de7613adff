import { assertSessionId, mapConcurrent, type OperationOptions, StowageError } from "@stowage/core";
import type { SessionBlobRepository } from "@stowage/sessions";
import type { TenantBase } from "../create-stowage.js";
import type { SessionDeletionReport } from "../delete-session.js";
import type { ExpiredTrash } from "./expired-trash.js";
import type { TrashedThing } from "./trash-entries.js";

// Stored sessions (captures kept between container runs) reach the trash by expiring (by their TTL,
// or now, when their owner deletes them: `deleteSessionBlobs`): the sweep
// deletes a record only `trashDays` after its `expiresAt`, and until then its owner sees it here,
// one item per session id (every request's expired records of it), and can bring it back or
// purge it. Nothing is moved: the record stays in its row, hidden from every read by its expiry,
// and counted as a garbage-collection root (`list` takes expired records), so that its chunks
// and payloads are still there when it comes back.

/** A restored stored session is kept this long from its restore, as a new capture is: 7 days. */
const RESTORED_TTL_MS = 7 * 24 * 60 * 60 * 1000;
/** Expired records read per page while the trash is listed. */
const LISTING_PAGE = 1000;

/** The deployment's stored sessions, and how long an expired one stays in its owner's trash. */
export interface StoredSessionTrash {
  repository: SessionBlobRepository;
  graceMs: number;
}

/** What an owner's expired captures of one session id hold: when the first and the last expired, and their bytes. */
interface ExpiredCaptures {
  firstExpiry: number;
  lastExpiry: number;
  /** Who deleted the last to expire (`trashedBy`), or `ttl` when its time ran out. */
  by: string;
  bytes: number;
}

/** The owner's expired stored sessions, by session id. */
async function expiredBySession(
  trash: StoredSessionTrash,
  owner: string,
  options: OperationOptions,
): Promise<Map<string, ExpiredCaptures>> {
  const sessions = new Map<string, ExpiredCaptures>();
  let cursor: string | undefined;
  do {
    const page = await trash.repository.listByOwner(owner, {
      ...options,
      expired: true,
      limit: LISTING_PAGE,
      ...(cursor === undefined ? {} : { cursor }),
    });
    for (const record of page.sessions) {
      const expiry = record.expiresAt?.getTime() ?? 0;
      const by = record.trashedBy ?? "ttl";
      const held = sessions.get(record.sessionId) ?? {
        firstExpiry: expiry,
        lastExpiry: expiry,
        by,
        bytes: 0,
      };
      held.firstExpiry = Math.min(held.firstExpiry, expiry);
      if (expiry >= held.lastExpiry) {
        held.lastExpiry = expiry;
        held.by = by;
      }
      held.bytes += record.storedBytes;
      sessions.set(record.sessionId, held);
    }
    cursor = page.cursor;
  } while (cursor !== undefined);
  return sessions;
}

/**
 * The tenant's expired stored sessions still in their grace period, one item per session id:
 * `trashedAt` when its last record expired, `purgeAfter` when the sweep deletes its first, `by`
 * who deleted that record (`deleteSessionBlobs`), or `ttl`. A session in the trash as a whole holds its stored sessions: they come back or go with it.
 */
async function listTrashedStoredSessions(
  trash: StoredSessionTrash | undefined,
  tenant: TenantBase,
  options: OperationOptions = {},
): Promise<TrashedThing[]> {
  if (!trash) return [];
  const sessions = [...(await expiredBySession(trash, tenant.owner, options))];
  const states = await mapConcurrent(sessions, 8, ([sessionId]) =>
    tenant.registeredSessions.state(sessionId, options),
  );
  return sessions
    .filter((_, index) => states[index] !== "trashed")
    .map(([sessionId, held]) => ({
      kind: "storedSession",
      id: sessionId,
      trashedAt: new Date(held.lastExpiry).toISOString(),
      purgeAfter: new Date(held.firstExpiry + trash.graceMs).toISOString(),
      by: held.by,
      bytes: held.bytes,
    }));
}

/** The tenant's stored session `id` as its trash lists it; NOT_FOUND (`NOT_IN_TRASH`) when it is not there. */
async function trashedStoredSession(
  trash: StoredSessionTrash | undefined,
  tenant: TenantBase,
  id: unknown,
  options: OperationOptions,
): Promise<{ item: TrashedThing; trash: StoredSessionTrash }> {
  assertSessionId(id);
  if (!trash) throw notInTrash(id as string);
  const items = await listTrashedStoredSessions(trash, tenant, options);
  const item = items.find((thing) => thing.id === id);
  if (!item) throw notInTrash(id as string);
  return { item, trash };
}

const notInTrash = (id: string) =>
  new StowageError("NOT_FOUND", `nothing in the trash is storedSession ${id}`, { reason: "NOT_IN_TRASH" });

/**
 * Brings an expired stored session back: every request's expired record of it, as it was, now
 * expiring {@link RESTORED_TTL_MS} from now (extend it further as any stored session). NOT_FOUND
 * (`NOT_IN_TRASH`) when none is left (purged, restored already, another principal's).
 */
async function restoreStoredSession(
  storedSessions: StoredSessionTrash | undefined,
  tenant: TenantBase,
  id: unknown,
  options: OperationOptions = {},
): Promise<TrashedThing> {
  const { item, trash } = await trashedStoredSession(storedSessions, tenant, id, options);
  const expiresAt = new Date(Date.now() + RESTORED_TTL_MS);
  // A sweep that purged it since the listing leaves nothing to restore: said, never a silent 0.
  if ((await trash.repository.restoreExpired(tenant.owner, item.id, expiresAt, options)) === 0) {
    throw notInTrash(item.id);
  }
  return item;
}

/**
 * Deletes an expired stored session now (every request's expired record of it; a capture stored
 * since stays), with a row in the owner's deletion audit `by` whoever asked. NOT_FOUND
 * (`NOT_IN_TRASH`) when it is not in the trash.
 */
async function purgeStoredSession(
  storedSessions: StoredSessionTrash | undefined,
  tenant: TenantBase,
  id: unknown,
  options: OperationOptions & { by?: string } = {},
): Promise<SessionDeletionReport> {
  const { by = "operator", ...operation } = options;
  const { item, trash } = await trashedStoredSession(storedSessions, tenant, id, operation);
  const deleted = await trash.repository.purgeExpired(tenant.owner, item.id, operation);
  if (deleted === 0) throw notInTrash(item.id);
  await tenant.deletionAudit.append(
    [
      {
        kind: "sessionBlobs",
        id: item.id,
        bytes: item.bytes,
        by,
        reason:
          item.by === "ttl"
            ? `purged from the trash: stored session expired at ${item.trashedAt}`
            : `purged from the trash: stored session deleted by ${item.by} at ${item.trashedAt}`,
        report: { records: deleted },
      },
    ],
    operation,
  );
  return { sessionId: item.id, deleted: { sessionBlobs: deleted } };
}

/** The trash of expired stored sessions (kind `storedSession`); empty where the table stores none. */
export function storedSessionTrash(trash: StoredSessionTrash | undefined): ExpiredTrash {
  return {
    list: (tenant, options) => listTrashedStoredSessions(trash, tenant, options),
    restore: (tenant, id, options) => restoreStoredSession(trash, tenant, id, options),
    purge: (tenant, id, options) => purgeStoredSession(trash, tenant, id, options),
  };
}
