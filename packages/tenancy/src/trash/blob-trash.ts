import { isSha256Hex, mapConcurrent, type OperationOptions, StowageError } from "@stowage/core";
import type { TenantBase } from "../create-stowage.js";
import type { SessionDeletionReport } from "../delete-session.js";
import { assertDeletedBy } from "../shared/deletion-audit-rows.js";
import { SHARED_LAYOUT } from "../shared/shared-layout.js";
import type { SharedStores } from "../shared/shared-stores.js";
import type { ExpiredTrash } from "./expired-trash.js";
import type { TrashedThing } from "./trash-entries.js";

// Blobs a garbage collection took wait in the blob trash (`<blobs prefix>.gc-trash/<hash>`,
// stamped when they went there) for the deployment's trash days, and keep their owners' marks
// meanwhile: a principal's trash lists the trashed blobs it has a mark of (kind `blob`, the hash
// as id). A restore puts the blob back for every owner; a purge gives up this principal's claim
// (its mark goes), and the bytes go at the collection that finds their stay over.

/** Trashed blobs looked at (a mark each) at once while a trash is listed. */
const CHECKS_AT_ONCE = 8;

const notInTrash = (id: unknown) =>
  new StowageError("NOT_FOUND", `nothing in the trash is blob ${String(id)}`, { reason: "NOT_IN_TRASH" });

/** Where the tenant's mark of `hash` is (`createOwnedBlobStore`'s layout: `<prefix><owner>/<hash>`). */
const markKey = (tenant: TenantBase, hash: string) => `${SHARED_LAYOUT.blobOwners}${tenant.owner}/${hash}`;

function trashedBlob(hash: string, stamped: Date, size: number, graceMs: number): TrashedThing {
  return {
    kind: "blob",
    id: hash,
    trashedAt: stamped.toISOString(),
    purgeAfter: new Date(stamped.getTime() + graceMs).toISOString(),
    by: "gc",
    bytes: size,
  };
}

/** The tenant's trashed blob `id` with what its trash copy says; NOT_FOUND when it is not the tenant's or not there. */
async function tenantsTrashedBlob(
  shared: SharedStores,
  graceMs: number,
  tenant: TenantBase,
  id: unknown,
  options: OperationOptions,
): Promise<TrashedThing> {
  if (!isSha256Hex(id)) {
    throw new StowageError("INVALID_INPUT", "a blob in the trash is named by its SHA-256 (64 hex digits)", {
      reason: "INVALID_BLOB_ID",
    });
  }
  const { objects, trashPrefix } = shared.blobs;
  const [copy, mark] = await Promise.all([
    objects.head(trashPrefix + id, options),
    shared.shared.head(markKey(tenant, id), options),
  ]);
  if (!copy || !mark) throw notInTrash(id);
  return trashedBlob(id, copy.lastModified, copy.size, graceMs);
}

/** The trash of blobs garbage collection took (kind `blob`), as each owner sees it. */
export function blobTrash(shared: SharedStores, graceMs: number): ExpiredTrash {
  return {
    async list(tenant, options) {
      const { objects, trashPrefix } = shared.blobs;
      const trashed: { hash: string; lastModified: Date; size: number }[] = [];
      for await (const item of objects.iterate({ prefix: trashPrefix, ...options })) {
        const hash = item.key.slice(trashPrefix.length);
        if (isSha256Hex(hash)) trashed.push({ hash, lastModified: item.lastModified, size: item.size });
      }
      const marked = await mapConcurrent(
        trashed,
        CHECKS_AT_ONCE,
        async ({ hash }) => (await shared.shared.head(markKey(tenant, hash), options)) !== null,
        options.signal,
      );
      return trashed
        .filter((_blob, index) => marked[index])
        .map(({ hash, lastModified, size }) => trashedBlob(hash, lastModified, size, graceMs));
    },
    async restore(tenant, id, options) {
      const item = await tenantsTrashedBlob(shared, graceMs, tenant, id, options);
      if (!(await shared.blobs.restoreCollected(item.id, options))) throw notInTrash(id);
      return item;
    },
    async purge(tenant, id, options): Promise<SessionDeletionReport> {
      const { by = "operator", ...operation } = options;
      assertDeletedBy(by);
      const item = await tenantsTrashedBlob(shared, graceMs, tenant, id, operation);
      await shared.shared.delete(markKey(tenant, item.id), operation);
      await tenant.deletionAudit.append(
        [
          {
            kind: "blobs",
            id: item.id,
            bytes: item.bytes,
            by,
            reason:
              "purged from the trash by its owner: no longer theirs; its bytes go once no owner's mark is left and its stay is over",
          },
        ],
        operation,
      );
      return { sessionId: item.id, deleted: { blobs: { deletedObjects: 1, deletedBytes: item.bytes } } };
    },
  };
}
