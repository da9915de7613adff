import { randomUUID } from "node:crypto";
import {
  assertSessionId,
  type ObjectStore,
  type OperationOptions,
  StowageError,
  trashDaysOf,
} from "@stowage/core";
import type { TenantBase } from "../create-stowage.js";
import {
  deleteSessionFrom,
  type SessionDeletionOptions,
  type SessionDeletionReport,
} from "../delete-session.js";
import { assertDeletedBy } from "../shared/deletion-audit-rows.js";
import { namespaceOf } from "../shared/owner.js";
import type { SessionTrashMark } from "../shared/registered-sessions.js";
import type { SessionDeletionContext, StoreTable } from "../store-definition.js";
import {
  assertTrashKind,
  decide,
  entryKeyOf,
  parseEntryKey,
  readEntry,
  removeEntry,
  type TrashedThing,
  trashRootOf,
  writeEntry,
} from "./trash-entries.js";

const DAY_MS = 24 * 60 * 60 * 1000;

type TrashTenant = TenantBase & Record<string, unknown>;

/**
 * The trash days of a deletion whose things wait in the trash for the deployment's days (what
 * expires there, swept by the store's own sweep): 0 (delete now) or the deployment's; any other
 * is INVALID_INPUT (`TRASH_DAYS_FIXED`). `what` names them in the message.
 */
export function fixedTrashDaysOf(
  given: number | undefined,
  deploymentDays: number | undefined,
  what: string,
) {
  const days = trashDaysOf(given, deploymentDays);
  const fixed = trashDaysOf(undefined, deploymentDays);
  if (days !== 0 && days !== fixed) {
    throw new StowageError(
      "INVALID_INPUT",
      `${what} wait in the trash for the deployment's ${fixed} days; trashDays may be 0 (delete now) or ${fixed}, got ${days}`,
      { reason: "TRASH_DAYS_FIXED" },
    );
  }
  return days;
}

/** How long an expired stored session stays in its owner's trash: the deployment's trash days. */
export const trashGraceMsOf = (deploymentDays: number | undefined) =>
  Math.round(trashDaysOf(undefined, deploymentDays) * DAY_MS);

/**
 * Moves a registered session to its owner's trash: every store may refuse first (hot state: a
 * claimed session without its dispatcher's token), then each does what it does on a trashing
 * (hot state ends the claim), then the entry is written and the registration marked. From the
 * mark on, `has` is false: every route answers 404 for the session, nothing is granted into it,
 * registering the id is CONFLICT `SESSION_IN_TRASH`; its data stays where it is, untouched, so a
 * restore puts back exactly what was there. A session being deleted (a deletion cut short) is
 * finished instead.
 */
export async function moveSessionToTrash(
  store: ObjectStore,
  stores: StoreTable,
  tenant: TrashTenant,
  sessionId: string,
  days: number,
  options: SessionDeletionOptions,
): Promise<SessionDeletionReport> {
  const { dispatcherToken, by = "operator", trashDays: _days, ...operation } = options;
  const state = await tenant.registeredSessions.state(sessionId, operation);
  if (state === "deleting") return deleteSessionFrom(stores, tenant, sessionId, options);
  if (state !== "registered") {
    const inTrash = state === "trashed";
    throw new StowageError(
      "NOT_FOUND",
      inTrash ? `session ${sessionId} is in the trash already` : `no session ${sessionId}`,
      { reason: inTrash ? "SESSION_IN_TRASH" : "SESSION_NOT_FOUND" },
    );
  }
  assertDeletedBy(by);
  const context: SessionDeletionContext = {
    ...operation,
    principal: tenant.principal,
    owner: tenant.owner,
    ...(dispatcherToken === undefined ? {} : { dispatcherToken }),
  };
  const rows = Object.entries(stores);
  for (const [name, row] of rows) await row.checkDeletion?.(tenant[name], sessionId, context);
  let bytes = 0;
  for (const [name, row] of rows) {
    bytes += (await row.trashBytes?.(tenant[name], sessionId, context)) ?? 0;
    for (const prefix of row.sessionPrefixes?.(namespaceOf(tenant.principal), sessionId) ?? []) {
      for await (const item of store.iterate({ ...operation, prefix })) bytes += item.size;
    }
  }
  for (const [name, row] of rows) await row.onTrash?.(tenant[name], sessionId, context);
  const now = new Date();
  const mark: SessionTrashMark = {
    trashId: randomUUID(),
    trashedAt: now.toISOString(),
    purgeAfter: new Date(now.getTime() + days * DAY_MS).toISOString(),
    by,
  };
  // The entry first: a crash before the mark leaves an entry no registration names (a sweep
  // removes it), never a session in the trash that no listing or sweep finds.
  const entryKey = entryKeyOf(namespaceOf(tenant.principal), sessionId, mark.trashId);
  await writeEntry(store, entryKey, { kind: "session", id: sessionId, bytes, ...mark }, operation);
  await tenant.registeredSessions.markTrashed(sessionId, mark, operation);
  // Two deletions at once: the registration keeps one mark, and both report that one.
  const kept = (await tenant.registeredSessions.trashMark(sessionId, operation)) ?? mark;
  const { trashId: _id, ...listed } = kept;
  return { sessionId, deleted: {}, trash: { kind: "session", id: sessionId, bytes, ...listed } };
}

/**
 * What is in the tenant's trash, soonest purged first, and the bytes it holds: its deleted
 * sessions, and `also` (its expired stored sessions, which no entry records).
 */
export async function listTrash(
  store: ObjectStore,
  tenant: TrashTenant,
  options: OperationOptions = {},
  also: readonly TrashedThing[] = [],
): Promise<{ items: TrashedThing[]; bytes: number }> {
  const items: TrashedThing[] = [...also];
  for await (const item of store.iterate({
    ...options,
    prefix: trashRootOf(namespaceOf(tenant.principal)),
  })) {
    const parts = parseEntryKey(item.key);
    if (parts === undefined) continue;
    // Only the stay the registration names: an entry of a crashed or lost deletion is not listed.
    const mark = await tenant.registeredSessions.trashMark(parts.sessionId, options);
    if (mark?.trashId !== parts.trashId) continue;
    const entry = await readEntry(store, item.key, options);
    if (entry === null) continue;
    const { trashId: _id, ...listed } = entry;
    items.push(listed);
  }
  items.sort((a, b) => a.purgeAfter.localeCompare(b.purgeAfter) || a.id.localeCompare(b.id));
  return { items, bytes: items.reduce((sum, item) => sum + item.bytes, 0) };
}

/** The stay in the trash of `kind`/`id` the registration names; NOT_FOUND when there is none. */
async function currentStay(tenant: TrashTenant, kind: unknown, id: unknown, options: OperationOptions) {
  assertTrashKind(kind);
  assertSessionId(id);
  // Only sessions have stays; the other kinds are the deployment's to dispatch (createStowage).
  const mark = kind === "session" ? await tenant.registeredSessions.trashMark(id as string, options) : null;
  if (mark === null) {
    throw new StowageError("NOT_FOUND", `nothing in the trash is ${kind} ${id}`, { reason: "NOT_IN_TRASH" });
  }
  return {
    sessionId: id as string,
    mark,
    entryKey: entryKeyOf(namespaceOf(tenant.principal), id as string, mark.trashId),
  };
}

function conflict(sessionId: string, action: "restore" | "purge", standing: "restore" | "purge") {
  return new StowageError(
    "CONFLICT",
    standing === action
      ? `session ${sessionId} is being ${action === "purge" ? "purged" : "restored"} by another request`
      : `session ${sessionId} cannot be ${action === "purge" ? "purged" : "restored"}: it is being ${standing === "purge" ? "purged" : "restored"}`,
    { reason: standing === "purge" ? "TRASH_PURGING" : "TRASH_RESTORING" },
  );
}

/**
 * Takes a session out of the trash: its registration loses the mark, so every store of it is
 * reachable again exactly as it was (nothing was moved). CONFLICT (`TRASH_PURGING`) when a purge
 * of it was decided first; NOT_FOUND (`NOT_IN_TRASH`) when it is not in the trash (purged, never
 * deleted, another principal's).
 */
export async function restoreFromTrash(
  store: ObjectStore,
  tenant: TrashTenant,
  kind: unknown,
  id: unknown,
  options: OperationOptions & { resume?: boolean } = {},
): Promise<TrashedThing> {
  const { resume = false, ...operation } = options;
  const { sessionId, mark, entryKey } = await currentStay(tenant, kind, id, operation);
  const entry = await readEntry(store, entryKey, operation);
  const decision = await decide(store, entryKey, "restore", operation);
  if (decision.action !== "restore" || !(decision.mine || resume)) {
    throw conflict(sessionId, "restore", decision.action);
  }
  await tenant.registeredSessions.unmarkTrashed(sessionId, mark.trashId, operation);
  await removeEntry(store, entryKey, operation);
  const { trashId: _id, ...listed } = mark;
  return { kind: "session", id: sessionId, bytes: entry?.bytes ?? 0, ...listed };
}

/**
 * Purges a session from the trash now: the deletion it was spared (every store of the table, in
 * its order, the deletion audit's rows, the registration last), then its entry. CONFLICT
 * (`TRASH_RESTORING`) when a restore of it was decided first; NOT_FOUND (`NOT_IN_TRASH`) when
 * it is not in the trash.
 */
export async function purgeFromTrash(
  store: ObjectStore,
  stores: StoreTable,
  tenant: TrashTenant,
  kind: unknown,
  id: unknown,
  options: OperationOptions & { by?: string; resume?: boolean } = {},
): Promise<SessionDeletionReport> {
  const { resume = false, by, ...operation } = options;
  const { sessionId, mark, entryKey } = await currentStay(tenant, kind, id, operation);
  const decision = await decide(store, entryKey, "purge", operation);
  if (decision.action !== "purge" || !(decision.mine || resume)) {
    throw conflict(sessionId, "purge", decision.action);
  }
  const report = await deleteSessionFrom(
    stores,
    tenant,
    sessionId,
    { ...operation, by: by ?? mark.by },
    mark,
  );
  await removeEntry(store, entryKey, operation);
  return report;
}
