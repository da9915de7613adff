import { type OperationOptions, StowageError } from "@stowage/core";
import type { TenantBase } from "./create-stowage.js";
import type { DefaultStores } from "./default-stores.js";
import { assertDeletedBy } from "./shared/deletion-audit-rows.js";
import type { OpenedStore } from "./store-definition.js";
import { fixedTrashDaysOf } from "./trash/trash.js";

const DAY_MS = 24 * 60 * 60 * 1000;

/** What {@link deleteSessionUploads} did: deleted the uploads now, or moved them to the trash. */
export interface SessionUploadsDeletionReport {
  sessionId: string;
  /** With `trashDays: 0`: what went, for good (its URLs revoked). */
  deleted?: { deletedObjects: number; deletedBytes: number };
  /**
   * Otherwise: how many uploads are now in the trash (kind `upload`, one item each, `by` who
   * deleted them), their bytes, and when the sweep purges them unless restored.
   */
  trash?: { uploads: number; bytes: number; purgeAfter: string };
}

/** What deleting a session's uploads reads and writes of the tenant. */
type SessionUploadsTenant = TenantBase & { uploads?: OpenedStore<DefaultStores["uploads"]> };

/**
 * Deletes the uploads of one of the tenant's sessions. By default into the trash: the upload
 * service marks them deleted now (they are neither listed nor served, still counted in the
 * quota; each is restored or purged from the trash as an `upload`, and the sweep deletes them
 * the deployment's `trashDays` later); uploads made afterwards are not touched. With
 * `trashDays: 0`: deleted now and the session's upload URLs revoked. Either way one audit row by
 * `by`. A `trashDays` other than 0 or the deployment's is INVALID_INPUT (`TRASH_DAYS_FIXED`): the
 * sweep keeps them the deployment's days.
 */
export async function deleteSessionUploads(
  tenant: SessionUploadsTenant,
  deploymentTrashDays: number | undefined,
  sessionId: string,
  options: OperationOptions & { by?: string; trashDays?: number } = {},
): Promise<SessionUploadsDeletionReport> {
  const { by = "operator", trashDays, ...operation } = options;
  assertDeletedBy(by);
  const { uploads } = tenant;
  if (!uploads)
    throw new StowageError("NOT_FOUND", `no session ${sessionId}`, { reason: "SESSION_NOT_FOUND" });
  const days = fixedTrashDaysOf(trashDays, deploymentTrashDays, "uploads");
  if (days === 0) {
    const deleted = await uploads.deleteSession(sessionId, operation);
    if (deleted.deletedObjects > 0) {
      await tenant.deletionAudit.append(
        [
          {
            kind: "uploads",
            id: sessionId,
            bytes: deleted.deletedBytes,
            by,
            reason: "the session's uploads deleted",
            report: { deletedObjects: deleted.deletedObjects, deletedBytes: deleted.deletedBytes },
          },
        ],
        operation,
      );
    }
    return { sessionId, deleted };
  }
  const trashed = await uploads.trash(sessionId, by, operation);
  const purgeAfter = new Date(trashed.trashedAt.getTime() + days * DAY_MS).toISOString();
  if (trashed.uploads > 0) {
    await tenant.deletionAudit.append(
      [
        {
          kind: "uploads",
          id: sessionId,
          bytes: trashed.bytes,
          by,
          reason: `the session's uploads moved to the trash until ${purgeAfter}`,
          report: { trashed: trashed.uploads },
        },
      ],
      operation,
    );
  }
  return { sessionId, trash: { uploads: trashed.uploads, bytes: trashed.bytes, purgeAfter } };
}
