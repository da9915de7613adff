import { trashDaysOf } from "@stowage/core";
import type { ExpiredSessionBlob } from "@stowage/sessions";
import type { SweptUpload, UploadService } from "@stowage/uploads";
import { ownerOf } from "./shared/owner.js";
import type { Deployment } from "./store-definition.js";
import type { SweepContext } from "./sweep.js";

/** Rows grouped by the owner they go to. */
function byOwner<Thing>(
  things: readonly Thing[],
  ownerOfThing: (thing: Thing) => string,
): Map<string, Thing[]> {
  const groups = new Map<string, Thing[]>();
  for (const thing of things) {
    const owner = ownerOfThing(thing);
    groups.set(owner, [...(groups.get(owner) ?? []), thing]);
  }
  return groups;
}

/** Uploads a sweep deleted, each to its owner's audit, `by` whom and why (per upload). */
async function auditSweptUploads(
  gone: readonly SweptUpload[],
  audit: SweepContext["audit"],
  by: string,
  reason: (upload: SweptUpload) => string,
): Promise<void> {
  for (const [owner, owned] of byOwner(gone, (upload) => ownerOf(upload.principal))) {
    await audit(
      owner,
      owned.map((upload) => ({
        kind: "uploads",
        id: `${upload.sessionId}/${upload.filename}`,
        bytes: upload.size,
        by,
        reason: reason(upload),
      })),
    );
  }
}

/** One batch of expired stored sessions, each to its owner's audit (`ttl`). */
export async function auditExpiredSessionBlobs(
  records: readonly ExpiredSessionBlob[],
  audit: SweepContext["audit"],
): Promise<void> {
  for (const [owner, owned] of byOwner(records, (record) => record.owner)) {
    await audit(
      owner,
      owned.map((record) => ({
        kind: "sessionBlobs",
        id: record.sessionId,
        bytes: record.storedBytes,
        by: "ttl",
        reason: `expired at ${record.expiresAt?.toISOString() ?? "(no expiry)"} (request ${record.requestId})`,
      })),
    );
  }
}

/**
 * The uploads store's sweep: what revoked URLs wrote after their session's deletion (each in its
 * owner's audit, `retention`), then, where the deployment keeps uploads for a time, those past it
 * and past their stay in the trash, each session's in its owner's audit (`retention`) as soon as
 * they are deleted, before the sweep goes on to the next session.
 */
export async function sweepUploads(
  uploads: UploadService,
  deployment: Deployment,
  { audit, signal }: SweepContext,
): Promise<number> {
  const io = signal ? { signal } : {};
  const revoked = await uploads.sweepRevokedUploads(io);
  for (const [owner, owned] of byOwner(revoked.uploads, (upload) => ownerOf(upload.principal))) {
    await audit(
      owner,
      owned.map((upload) => ({
        kind: "uploads",
        id: `${upload.sessionId}/${upload.filename}`,
        by: "retention",
        reason: "landed through an upload URL its session's deletion had revoked",
      })),
    );
  }
  // Uploads deleted into the trash with their session's (`deleteSessionUploads`), once their stay
  // there is over; each session's in its owner's audit, by who deleted them.
  const trashDays = trashDaysOf(undefined, deployment.trashDays);
  const trashed = await uploads.sweepTrashedUploads({
    graceMs: trashDays * 24 * 60 * 60 * 1000,
    ...io,
    onSwept: (gone, by) =>
      auditSweptUploads(
        gone,
        audit,
        by,
        () => `purged from the trash: its session's uploads were deleted ${trashDays} days before`,
      ),
  });
  const retentionDays = deployment.uploadRetentionDays;
  if (retentionDays === undefined) return revoked.removed + trashed;
  // An upload past retention waits in its owner's trash for the deployment's trash days first.
  const swept = await uploads.sweepUploads({
    olderThanDays: retentionDays + trashDays,
    ...io,
    onSwept: (gone) =>
      auditSweptUploads(
        gone,
        audit,
        "retention",
        (upload) =>
          `last modified ${upload.lastModified.toISOString()}, past the retention of ${retentionDays} days and ${trashDays} days in the trash`,
      ),
  });
  return revoked.removed + trashed + swept.uploads.length;
}
