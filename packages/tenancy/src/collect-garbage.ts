import {
  type BlobRootSource,
  type CollectGarbageOptions,
  collectGarbage,
  type GarbageCollectionReport,
} from "@stowage/blob-store";
import type { DeletionAuditInput } from "./shared/deletion-audit-rows.js";
import { principalOfOwner } from "./shared/owner.js";
import type { SharedStores } from "./shared/shared-stores.js";

/** Options of `Stowage.collectGarbage`: blob-store's, the blobs, roots, marks and audit given by the deployment. */
export type StowageGarbageCollectionOptions = Omit<
  CollectGarbageOptions,
  "blobs" | "roots" | "ownerMarks" | "onBlobDeleted" | "onOwnerMarkRemoved"
>;

/** Rows per audit, by owner (`null`: the deployment's). */
type RowsByOwner = Map<string | null, DeletionAuditInput[]>;

function rowsOfRun(
  deleted: ReadonlyMap<string, number>,
  owners: ReadonlyMap<string, string[]>,
  graceMs: number,
) {
  const rows: RowsByOwner = new Map();
  const add = (owner: string | null, row: DeletionAuditInput) =>
    rows.set(owner, [...(rows.get(owner) ?? []), row]);
  const reason = `referenced by nothing, older than the grace period of ${graceMs / 3_600_000} hours`;
  for (const [hash, size] of deleted) {
    const base = { kind: "blobs", id: hash, bytes: size, by: "gc" };
    const known = (owners.get(hash) ?? []).filter((owner) => principalOfOwner(owner) !== null);
    if (known.length === 0) {
      add(null, {
        ...base,
        reason: `${reason}; no owner's mark named it, or the run stopped before they were read`,
      });
    }
    for (const owner of known) add(owner, { ...base, reason });
  }
  return rows;
}

/**
 * A garbage collection of the deployment's blobs with every store's roots and owners' marks, each
 * deleted blob then recorded in the deletion audit of every principal whose mark it had (`gc`),
 * or of the deployment when none had. The rows are written when the run ends, failed or not:
 * who owned a blob is known only from the marks the run's last step removes.
 */
export async function collectAuditedGarbage(
  shared: SharedStores,
  roots: BlobRootSource[],
  options: StowageGarbageCollectionOptions,
): Promise<GarbageCollectionReport> {
  const deleted = new Map<string, number>();
  const owners = new Map<string, string[]>();
  let failure: unknown;
  let report: GarbageCollectionReport | undefined;
  try {
    report = await collectGarbage({
      ...options,
      blobs: shared.blobs,
      roots,
      ownerMarks: shared.ownerMarks,
      onBlobDeleted: ({ hash, size }) => deleted.set(hash, size),
      onOwnerMarkRemoved: ({ owner, hash }) => owners.set(hash, [...(owners.get(hash) ?? []), owner]),
    });
  } catch (err) {
    failure = err;
  }
  const graceMs = options.graceMs ?? 24 * 3_600_000;
  const io = options.signal ? { signal: options.signal } : {};
  for (const [owner, rows] of rowsOfRun(deleted, owners, graceMs)) {
    const principal = owner === null ? null : principalOfOwner(owner);
    const audit = principal ? shared.deletionAudit(principal) : shared.deploymentAudit;
    try {
      await audit.append(rows, io);
    } catch (err) {
      failure ??= err;
    }
  }
  if (failure !== undefined) throw failure;
  return report!;
}
