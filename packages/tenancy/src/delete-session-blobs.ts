import { type OperationOptions, StowageError } from "@stowage/core";
import type { TenantBase } from "./create-stowage.js";
import type { DefaultStores } from "./default-stores.js";
import { assertDeletedBy } from "./shared/deletion-audit-rows.js";
import type { OpenedStore } from "./store-definition.js";
import { fixedTrashDaysOf } from "./trash/trash.js";

const DAY_MS = 24 * 60 * 60 * 1000;

/** What {@link deleteSessionBlobs} did: deleted the records now, or moved them to the trash. */
export interface SessionBlobsDeletionReport {
  requestId: string;
  /** With `trashDays: 0`: how many records were deleted, for good. */
  deleted?: number;
  /**
   * Otherwise: how many records are now in the trash of stored sessions (kind `storedSession`,
   * listed there by session id), and when the sweep purges them unless restored.
   */
  trash?: { records: number; purgeAfter: string };
}

/** What deleting a request's stored sessions reads and writes of the tenant. */
type SessionBlobsTenant = TenantBase & {
  sessionBlobs?: OpenedStore<DefaultStores["sessionBlobs"]>;
  sessionActivity?: OpenedStore<DefaultStores["sessionActivity"]>;
};

/**
 * Deletes the tenant's stored sessions of a request. By default they go to the trash of stored
 * sessions: they expire now (`trashedBy` is `by`), so no read finds them, their chunks stay (the
 * repository's `list`, a GC root, takes expired records), a restore brings them back byte for
 * byte, and the `sessionBlobs` sweep purges them the deployment's `trashDays` later. The request's
 * activity (last capture and restore) stays with them. With `trashDays: 0` they and the activity
 * are deleted now. Either way one audit row by `by`. A `trashDays` other than 0 or the
 * deployment's is INVALID_INPUT (`TRASH_DAYS_FIXED`): an expired record's grace is the
 * deployment's. NOT_FOUND when the tenant stored nothing live for the request.
 */
export async function deleteSessionBlobs(
  tenant: SessionBlobsTenant,
  deploymentTrashDays: number | undefined,
  requestId: string,
  options: OperationOptions & { by?: string; trashDays?: number } = {},
): Promise<SessionBlobsDeletionReport> {
  const { by = "operator", trashDays, ...operation } = options;
  assertDeletedBy(by);
  const { sessionBlobs, sessionActivity } = tenant;
  if (!sessionBlobs) throw new StowageError("NOT_FOUND", `no stored session for request ${requestId}`);
  const days = fixedTrashDaysOf(trashDays, deploymentTrashDays, "stored sessions");
  if (days === 0) {
    const deleted = await sessionBlobs.deleteForRequest(requestId, operation);
    await sessionActivity?.deleteForRequest(requestId, operation);
    await tenant.deletionAudit.append(
      [
        {
          kind: "sessionBlobs",
          id: requestId,
          by,
          reason: "the request's stored sessions deleted",
          report: { removed: deleted },
        },
      ],
      operation,
    );
    return { requestId, deleted };
  }
  const records = await sessionBlobs.expireForRequest(requestId, by, operation);
  const purgeAfter = new Date(Date.now() + days * DAY_MS).toISOString();
  await tenant.deletionAudit.append(
    [
      {
        kind: "sessionBlobs",
        id: requestId,
        by,
        reason: `the request's stored sessions moved to the trash until ${purgeAfter}`,
        report: { trashed: records },
      },
    ],
    operation,
  );
  return { requestId, trash: { records, purgeAfter } };
}
