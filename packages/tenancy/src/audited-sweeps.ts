import { trashDaysOf } from "@stowage/core";
import type { ExpiredSessionBlob } from "@stowage/sessions";
import type { UploadService } from "@stowage/uploads";
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
  const retentionDays = deployment.uploadRetentionDays;
  if (retentionDays === undefined) return revoked.removed;
  // An upload past retention waits in its owner's trash for the deployment's trash days first.
  const trashDays = trashDaysOf(undefined, deployment.trashDays);
  const swept = await uploads.sweepUploads({
    olderThanDays: retentionDays + trashDays,
    ...io,
    onSwept: async (gone) => {
      for (const [owner, owned] of byOwner(gone, (upload) => ownerOf(upload.principal))) {
        await audit(
          owner,
          owned.map((upload) => ({
            kind: "uploads",
            id: `${upload.sessionId}/${upload.filename}`,
            bytes: upload.size,
            by: "retention",
            reason: `last modified ${upload.lastModified.toISOString()}, past the retention of ${retentionDays} days and ${trashDays} days in the trash`,
          })),
        );
      }
    },
  });
  return revoked.removed + swept.uploads.length;
}
