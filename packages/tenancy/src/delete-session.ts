import { type OperationOptions, StowageError } from "@stowage/core";
import type { TenantBase } from "./create-stowage.js";
import type { SessionDeletionContext, StoreTable } from "./store-definition.js";

/** Options of `Stowage.deleteSession`. */
export interface SessionDeletionOptions extends OperationOptions {
  /** The dispatcher token of the session's hot state: a claimed session is deleted only with it. */
  dispatcherToken?: string;
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
): Promise<SessionDeletionReport> {
  const { dispatcherToken, ...operation } = options;
  const context: SessionDeletionContext = {
    ...operation,
    principal: tenant.principal,
    owner: tenant.owner,
    ...(dispatcherToken === undefined ? {} : { dispatcherToken }),
  };
  const registration = await tenant.registeredSessions.state(sessionId, operation);
  if (registration === null) {
    throw new StowageError("NOT_FOUND", `no session ${sessionId}`, { reason: "SESSION_NOT_FOUND" });
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
      if (nothingDeleted && registration === "registered" && StowageError.is(err, "FORBIDDEN")) {
        await tenant.registeredSessions.unmarkDeleting(sessionId, operation);
      }
      throw err;
    }
  }
  await tenant.registeredSessions.unregister(sessionId, operation);
  return { sessionId, deleted };
}
