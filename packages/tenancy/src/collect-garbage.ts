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
  | "blobs"
  | "roots"
  | "ownerMarks"
  | "onBlobDeleted"
  | "onBlobPurged"
  | "onOwnerOfTrashed"
  | "onOwnerMarkRemoved"
>;

/** Rows per audit, by owner (`null`: the deployment's). */
type RowsByOwner = Map<string | null, DeletionAuditInput[]>;

/** What one run did that the audit records: blobs taken and purged, and whose they were. */
interface RunEvents {
  /** Blobs taken from the store this run (deleted, or moved to the trash), with their sizes. */
  taken: Map<string, number>;
  /** Blobs purged from the trash this run. */
  purged: Map<string, number>;
  /** Owners by hash: whose marks a taken blob kept (trash) or a gone one lost. */
  owners: Map<string, string[]>;
}

const HOUR_MS = 3_600_000;

function rowsOfRun({ taken, purged, owners }: RunEvents, graceMs: number, trashMs: number) {
  const rows: RowsByOwner = new Map();
  const add = (owner: string | null, row: DeletionAuditInput) =>
    rows.set(owner, [...(rows.get(owner) ?? []), row]);
  const unreferenced = `referenced by nothing, older than the grace period of ${graceMs / HOUR_MS} hours`;
  const takenReason =
    trashMs > 0
      ? `moved to the blob trash until ${new Date(Date.now() + trashMs).toISOString()} (restoreCollected brings it back; a root naming it again does): ${unreferenced}`
      : unreferenced;
  const record = (hash: string, size: number, reason: string) => {
    const base = { kind: "blobs", id: hash, bytes: size, by: "gc" };
    const known = (owners.get(hash) ?? []).filter((owner) => principalOfOwner(owner) !== null);
    if (known.length === 0) {
      add(null, {
        ...base,
        reason: `${reason}; no owner's mark named it, or the run stopped before they were read`,
      });
    }
    for (const owner of known) add(owner, { ...base, reason });
  };
  for (const [hash, size] of taken) record(hash, size, takenReason);
  for (const [hash, size] of purged)
    record(hash, size, "purged from the blob trash: its stay there was over");
  return rows;
}

/**
 * A garbage collection of the deployment's blobs with every store's roots and owners' marks.
 * What it takes waits `trashMs` in the blob store's trash (default: the deployment's trash days),
 * with its owners' marks, before a later run purges it. Each blob taken, and each purged, is
 * recorded in the deletion audit of every principal whose mark it had (`gc`), or of the
 * deployment when none had. The rows are written when the run ends, failed or not: who owned a
 * blob is known only from the marks the run's last step reads.
 */
export async function collectAuditedGarbage(
  shared: SharedStores,
  roots: BlobRootSource[],
  options: StowageGarbageCollectionOptions,
  deploymentTrashMs: number,
): Promise<GarbageCollectionReport> {
  const events: RunEvents = { taken: new Map(), purged: new Map(), owners: new Map() };
  const own = ({ owner, hash }: { owner: string; hash: string }) =>
    events.owners.set(hash, [...(events.owners.get(hash) ?? []), owner]);
  const trashMs = options.trashMs ?? deploymentTrashMs;
  let failure: unknown;
  let report: GarbageCollectionReport | undefined;
  try {
    report = await collectGarbage({
      ...options,
      trashMs,
      blobs: shared.blobs,
      roots,
      ownerMarks: shared.ownerMarks,
      onBlobDeleted: ({ hash, size }) => events.taken.set(hash, size),
      onBlobPurged: ({ hash, size }) => events.purged.set(hash, size),
      onOwnerOfTrashed: own,
      onOwnerMarkRemoved: own,
    });
  } catch (err) {
    failure = err;
  }
  const graceMs = options.graceMs ?? 24 * HOUR_MS;
  const io = options.signal ? { signal: options.signal } : {};
  for (const [owner, rows] of rowsOfRun(events, graceMs, trashMs)) {
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
