import { describeValue, StowageError, throwIfAborted } from "@stowage/core";
import { STAGING_SEGMENT } from "../blob-layout.js";
import { toBlobHash } from "../blob-ref.js";
import type { BlobStore } from "../blob-store.js";

/** Blobs younger than this are never collected: a writer may not have persisted its ref yet. */
export const DEFAULT_GC_GRACE_MS = 24 * 60 * 60 * 1000;

/**
 * Blobs stamped up to this long before the run started are also kept: backends that keep whole
 * seconds (S3) round a write made during the run down to before it began.
 */
export const DEFAULT_TIMESTAMP_SLACK_MS = 1000;

export type BlobRoots = Iterable<string> | AsyncIterable<string>;

export interface CollectGarbageOptions {
  blobs: BlobStore;
  /** Every ref (or hash) still in use, e.g. `scanSessionFilesForBlobRefs(sessionsDir)`. */
  roots: BlobRoots | (() => BlobRoots);
  /** Default {@link DEFAULT_GC_GRACE_MS}. */
  graceMs?: number;
  /** Default {@link DEFAULT_TIMESTAMP_SLACK_MS}. */
  timestampSlackMs?: number;
  /** Report what would be deleted without deleting. Default false. */
  dryRun?: boolean;
  signal?: AbortSignal;
}

export interface GarbageCollectionReport {
  dryRun: boolean;
  /** Blobs looked at. */
  scanned: number;
  /** Blobs kept because a root references them. */
  referenced: number;
  /** Unreferenced blobs kept because they are younger than the grace period. */
  young: number;
  /** Blobs deleted (or, in a dry run, that would be). */
  deleted: number;
  deletedBytes: number;
  /** Abandoned staging objects of interrupted streamed puts removed. */
  staleStaging: number;
  /** Distinct hashes the roots referenced. */
  rootRefs: number;
  durationMs: number;
}

function nonNegative(value: unknown, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    throw new StowageError(
      "INVALID_INPUT",
      `${name} must be a non-negative number, got ${describeValue(value)}`,
    );
  }
  return value;
}

/**
 * Deletes blobs that no root references and that are older than the grace period. The root set
 * is read completely before anything is deleted; if reading it fails, nothing is deleted. A blob
 * written or re-referenced (which refreshes its timestamp) after the run started is kept.
 */
export async function collectGarbage(options: CollectGarbageOptions): Promise<GarbageCollectionReport> {
  const { blobs, dryRun = false, signal } = options;
  const graceMs = nonNegative(options.graceMs, "graceMs", DEFAULT_GC_GRACE_MS);
  const slackMs = nonNegative(options.timestampSlackMs, "timestampSlackMs", DEFAULT_TIMESTAMP_SLACK_MS);
  const started = Date.now();
  // Anything stamped at or after this is young: written during the run or within the grace period.
  const youngSince = started - graceMs - slackMs;
  const isYoung = (lastModified: Date) => lastModified.getTime() >= youngSince;

  const referencedHashes = new Set<string>();
  const roots = typeof options.roots === "function" ? options.roots() : options.roots;
  for await (const root of roots) {
    throwIfAborted(signal, "collectGarbage");
    referencedHashes.add(toBlobHash(root));
  }

  const report: GarbageCollectionReport = {
    dryRun,
    scanned: 0,
    referenced: 0,
    young: 0,
    deleted: 0,
    deletedBytes: 0,
    staleStaging: 0,
    rootRefs: referencedHashes.size,
    durationMs: 0,
  };

  for await (const blob of blobs.iterate({ signal })) {
    report.scanned++;
    if (referencedHashes.has(blob.hash)) {
      report.referenced++;
      continue;
    }
    if (isYoung(blob.lastModified)) {
      report.young++;
      continue;
    }
    // Look again right before deleting: a writer may have re-referenced it since the listing.
    const current = await blobs.stat(blob.hash, { signal });
    if (!current) continue;
    if (isYoung(current.lastModified)) {
      report.young++;
      continue;
    }
    if (!dryRun) await blobs.delete(blob.hash, { signal });
    report.deleted++;
    report.deletedBytes += current.size;
  }

  const stagingPrefix = `${blobs.prefix}${STAGING_SEGMENT}/`;
  for await (const item of blobs.objects.iterate({ prefix: stagingPrefix, signal })) {
    if (isYoung(item.lastModified)) continue;
    if (!dryRun) await blobs.objects.delete(item.key, { signal });
    report.staleStaging++;
  }

  report.durationMs = Date.now() - started;
  return report;
}
