import { type OperationOptions, StowageError } from "@stowage/core";
import type { TenantBase } from "./create-stowage.js";
import { assertDeletedBy, type DeletionAuditInput, reportFields } from "./shared/deletion-audit-rows.js";
import type { SessionTrashMark } from "./shared/registered-sessions.js";
import type { SessionDeletionContext, StoreTable } from "./store-definition.js";
import type { TrashedThing } from "./trash/trash-entries.js";

/** Who a deletion is audited as when the caller does not say: the deployment's own code. */
const DEFAULT_DELETED_BY = "operator";

/** Options of `Stowage.deleteSession`. */
export interface SessionDeletionOptions extends OperationOptions {
  /** The dispatcher token of the session's hot state: a claimed session is deleted only with it. */
  dispatcherToken?: string;
  /**
   * Who asks, as the deletion audit records it: `key:<id>` for a request with an API key; default
   * `operator` (the deployment's own code).
   */
  by?: string;
  /**
   * Days the session stays in its owner's trash (every store of it unreachable, restorable)
   * before a sweep purges it; `0` deletes it now. Default: the deployment's `trashDays` (7).
   */
  trashDays?: number;
}

/** What a session's deletion removed: each store's own answer, under the store's name. */
export interface SessionDeletionReport {
  sessionId: string;
  /**
   * Per store of the table, what its deletion returned (with the default table: `uploads`
   * `{ deletedObjects, deletedBytes }`, `threads` and `sessionBlobs` counts, `agentSessions` whether
   * this host had the session file). Stores that hold nothing per session are not listed.
   */
  deleted: Record<string, unknown>;
  /** Where the session went when it was moved to the trash (then `deleted` is empty). */
  trash?: TrashedThing;
}

/**
 * Deletes one session of a tenant from every store of `stores`, in the table's order, and its
 * registration last. First every store may refuse (hot state: a claimed session without its
 * dispatcher's token is FORBIDDEN `NOT_DISPATCHER`) before anything changes; then the session is
 * marked as being deleted, so that nothing new is granted into it (an upload URL, a claim) while
 * its stores are emptied. Every step is idempotent: a deletion cut short leaves the mark, and
 * sending it again finishes it. NOT_FOUND (`SESSION_NOT_FOUND`) when the session is not registered
 * in the tenant's namespace (another principal's looks the same).
 */
export async function deleteSessionFrom(
  stores: StoreTable,
  tenant: TenantBase & Record<string, unknown>,
  sessionId: string,
  options: SessionDeletionOptions,
  /** The purge of a stay in the trash: the session is then deleted from the trashed state. */
  purging?: SessionTrashMark,
): Promise<SessionDeletionReport> {
  const { dispatcherToken, by = DEFAULT_DELETED_BY, trashDays: _trashDays, ...operation } = options;
  const context: SessionDeletionContext = {
    ...operation,
    principal: tenant.principal,
    owner: tenant.owner,
    ...(dispatcherToken === undefined ? {} : { dispatcherToken }),
  };
  assertDeletedBy(by);
  const registration = await tenant.registeredSessions.state(sessionId, operation);
  if (registration === null) {
    throw new StowageError("NOT_FOUND", `no session ${sessionId}`, { reason: "SESSION_NOT_FOUND" });
  }
  if (registration === "trashed" && purging === undefined) {
    throw new StowageError("NOT_FOUND", `session ${sessionId} is in the trash; purge it from there`, {
      reason: "SESSION_IN_TRASH",
    });
  }
  const rows = Object.entries(stores);
  for (const [name, row] of rows) await row.checkDeletion?.(tenant[name], sessionId, context);
  await tenant.registeredSessions.markDeleting(sessionId, operation);
  const deleted: Record<string, unknown> = {};
  for (const [name, row] of rows) {
    if (row.deleteSession === "principal-wide") continue;
    try {
      deleted[name] = await row.deleteSession(tenant[name], sessionId, context);
    } catch (err) {
      // A refusal before any store changed (a claim made since the checks): the deletion did not
      // happen, so the session is registered as before.
      const nothingDeleted = Object.keys(deleted).length === 0;
      if (nothingDeleted && registration !== "deleting" && StowageError.is(err, "FORBIDDEN")) {
        await tenant.registeredSessions.unmarkDeleting(sessionId, operation);
      }
      throw err;
    }
  }
  // Written before the registration goes: a failed or cut-short write leaves the session marked
  // as being deleted, and sending the deletion again writes it (nothing deleted without its row).
  await tenant.deletionAudit.append(auditRows(sessionId, deleted, by, registration, purging), operation);
  await tenant.registeredSessions.unregister(sessionId, operation);
  return { sessionId, deleted };
}

/** Whether a store's answer says it removed something: a count above 0, `true`, or such a field. */
function removedSomething(answer: unknown): boolean {
  if (typeof answer === "number") return answer > 0;
  if (typeof answer === "boolean") return answer;
  const fields = reportFields(answer);
  return (
    fields !== undefined && Object.values(fields).some((value) => value === true || (value as number) > 0)
  );
}

/** The session's row, then one per store that removed something, with the store's report. */
function auditRows(
  sessionId: string,
  deleted: Record<string, unknown>,
  by: string,
  registration: "registered" | "trashed" | "deleting",
  purging: SessionTrashMark | undefined,
): DeletionAuditInput[] {
  const reason = purging
    ? `session purged from the trash (deleted by ${purging.by} at ${purging.trashedAt})`
    : registration === "deleting"
      ? "session deleted (a deletion cut short before, finished now)"
      : "session deleted";
  const rows: DeletionAuditInput[] = [{ kind: "session", id: sessionId, by, reason }];
  for (const [name, answer] of Object.entries(deleted)) {
    if (!removedSomething(answer)) continue;
    const report = typeof answer === "object" ? reportFields(answer) : undefined;
    const bytes = report?.deletedBytes;
    rows.push({
      kind: name,
      id: sessionId,
      ...(typeof bytes === "number" && Number.isSafeInteger(bytes) && bytes >= 0 ? { bytes } : {}),
      by,
      reason: "its session was deleted",
      report: report ?? { removed: typeof answer === "number" ? answer : true },
    });
  }
  return rows;
}
