import { describeValue, StowageError } from "@stowage/core";
import { GC_ASIDE_SEGMENT, STAGING_SEGMENT, TOUCH_RECORD_SEGMENT } from "../blob-layout.js";
import type { BlobStore } from "../blob-store.js";
import { isOwnedBlobStore } from "../owned-blob-store.js";
import {
  chooseCandidates,
  collectCandidates,
  countDryRun,
  type GcRun,
  listTouchRecords,
  recoverAside,
  removeStaleStaging,
  removeStaleTouchRecords,
  sortCollectedTrash,
} from "./gc-steps.js";
import { type OwnerMarksLocation, ownerMarksLocations, removeStaleOwnerMarks } from "./owner-marks.js";
import { type BlobRootsOption, readRoots, rootSources } from "./root-sources.js";

/** Blobs younger than this are never collected: a writer may not have persisted its ref yet. */
const DEFAULT_GC_GRACE_MS = 24 * 60 * 60 * 1000;
/**
 * Staging objects this old are taken for the leftovers of interrupted streamed puts. Apart from
 * `graceMs`: a collection run with `graceMs: 0` must not take the bytes of a put still streaming
 * (a staging object is stamped by its last write, then moved at once).
 */
const DEFAULT_STAGING_GRACE_MS = 60 * 60 * 1000;

/**
 * Blobs stamped up to this long before the run started are also kept: backends that keep whole
 * seconds (S3) round a write made during the run down to before it began.
 */
const DEFAULT_TIMESTAMP_SLACK_MS = 1000;

/** Options of {@link collectGarbage}. */
export interface CollectGarbageOptions {
  blobs: BlobStore;
  /**
   * Every ref (or hash) still in use, read twice (before choosing candidates, and again before
   * deleting them): named root sources (`[{ name: "sessions", refs: () => scanFilesForBlobRefs(dir) }]`),
   * a function returning refs, or a list. A source that fails stops the run, deleting nothing.
   */
  roots: BlobRootsOption;
  /** Unreferenced blobs younger than this are kept. Default 24 hours. */
  graceMs?: number;
  /** Extra margin for backends that keep whole-second timestamps. Default 1,000. */
  timestampSlackMs?: number;
  /** Staging objects of streamed puts younger than this are kept. Default 1 hour. */
  stagingGraceMs?: number;
  /**
   * Where owned views (`createOwnedBlobStore`) over `blobs` keep their marks: each view's `marks`
   * store and `prefix`. The marks of blobs that are gone (deleted by this run or some other way)
   * are removed, so that a mark never outlives its bytes. Default: none looked at.
   */
  ownerMarks?: readonly OwnerMarksLocation[];
  /**
   * How long a blob this run takes is kept in the blob store's trash (`<prefix>.gc-trash/<hash>`),
   * where `blobs.restoreCollected(hash)` brings it back, before a later run deletes it for good.
   * Default 0: deleted at once (and a run with 0 empties the trash). A blob in the trash that a
   * root references again is put back by the next run: a root source that missed a ref, once
   * fixed, costs nothing.
   */
  trashMs?: number;
  /** Report what would be deleted without deleting (or moving) anything. Default false. */
  dryRun?: boolean;
  /** Called as the run goes (a progress bar): each blob scanned, each candidate decided. */
  onProgress?: (progress: GarbageCollectionProgress) => void;
  /**
   * Called once per blob this run deleted, right after its delete (never in a dry run): what an
   * audit of deletions records. Owners are told apart by {@link onOwnerMarkRemoved}.
   */
  onBlobDeleted?: (blob: { hash: string; size: number }) => void;
  /** Called once per blob a run purged from the trash, after its delete (never in a dry run). */
  onBlobPurged?: (blob: { hash: string; size: number }) => void;
  /**
   * Called once per owner's mark of a blob this run moved to the trash (`trashMs`): the mark stays
   * while the blob is there, so that a restore gives it back to its owners.
   */
  onOwnerOfTrashed?: (mark: { owner: string; hash: string }) => void;
  /** Called once per owner's mark removed because its blob is gone (never in a dry run). */
  onOwnerMarkRemoved?: (mark: { owner: string; hash: string }) => void;
  signal?: AbortSignal;
}

/**
 * How far a {@link collectGarbage} run has gone: `roots` (reading what is referenced: `done` refs
 * once read), `scan` (`done` blobs looked at; how many there are is not known before the end), then
 * `collect` (`done` of `total` candidates decided: deleted, or kept after all).
 */
export interface GarbageCollectionProgress {
  step: "roots" | "scan" | "collect";
  done: number;
  total?: number;
}

/** What {@link collectGarbage} did (or, in a dry run, would do). */
export interface GarbageCollectionReport {
  dryRun: boolean;
  /** Blobs looked at. */
  scanned: number;
  /** Blobs kept because a root references them. */
  referenced: number;
  /** Unreferenced blobs kept because they are younger than the grace period. */
  young: number;
  /** Blobs taken from the store: deleted, or moved to the trash with `trashMs` (in a dry run: that would be). */
  deleted: number;
  deletedBytes: number;
  /** Of those, how many went to the trash (`trashMs`), not deleted. */
  trashed: number;
  /** Blobs in the trash past `trashMs`, deleted for good (in a dry run: that would be). */
  purged: number;
  purgedBytes: number;
  /** Blobs in the trash that a root references again, put back in the store (in a dry run: that would be). */
  restoredFromTrash: number;
  /** Candidates moved aside and then put back: a writer touched them, or a root referenced them by the second reading. */
  restored: number;
  /** Blobs a collection that stopped half-way had left aside, put back at the start of this run. */
  recovered: number;
  /** Abandoned staging objects of interrupted streamed puts removed. */
  staleStaging: number;
  /** Touch records (stores whose move restamps) of blobs that are gone, removed. */
  staleTouchRecords: number;
  /** Owners' marks (`ownerMarks`) of blobs that are gone, removed. */
  staleOwnerMarks: number;
  /** Distinct hashes the roots referenced (first reading). */
  rootRefs: number;
  /** Distinct hashes each named root source gave (first reading). */
  rootRefsBySource: Record<string, number>;
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

/** Checks the options and sets up one run: its prefixes, its idea of "young", its empty report. */
function openRun(options: CollectGarbageOptions): GcRun {
  const { blobs, dryRun = false, signal } = options;
  if (isOwnedBlobStore(blobs)) {
    throw new StowageError(
      "INVALID_INPUT",
      "blobs must be the whole shared BlobStore, got one owner's view (createOwnedBlobStore): a collection moves and deletes bytes every owner shares, so it runs on the store the views were made from",
    );
  }
  if (typeof blobs?.iterate !== "function" || typeof blobs.objects?.move !== "function") {
    throw new StowageError("INVALID_INPUT", `blobs must be a BlobStore, got ${describeValue(blobs)}`);
  }
  const { onProgress } = options;
  if (onProgress !== undefined && typeof onProgress !== "function") {
    throw new StowageError(
      "INVALID_INPUT",
      `onProgress must be a function, got ${describeValue(onProgress)}`,
    );
  }
  for (const name of ["onBlobDeleted", "onBlobPurged", "onOwnerOfTrashed", "onOwnerMarkRemoved"] as const) {
    if (options[name] !== undefined && typeof options[name] !== "function") {
      throw new StowageError(
        "INVALID_INPUT",
        `${name} must be a function, got ${describeValue(options[name])}`,
      );
    }
  }
  const graceMs = nonNegative(options.graceMs, "graceMs", DEFAULT_GC_GRACE_MS);
  const slackMs = nonNegative(options.timestampSlackMs, "timestampSlackMs", DEFAULT_TIMESTAMP_SLACK_MS);
  const stagingGraceMs = nonNegative(options.stagingGraceMs, "stagingGraceMs", DEFAULT_STAGING_GRACE_MS);
  const trashMs = nonNegative(options.trashMs, "trashMs", 0);
  const started = Date.now();
  // Anything stamped at or after this is young: written during the run or within the grace period.
  const youngSince = started - graceMs - slackMs;
  return {
    blobs,
    objects: blobs.objects,
    dryRun,
    signal,
    sources: rootSources(options.roots),
    asidePrefix: `${blobs.prefix}${GC_ASIDE_SEGMENT}/`,
    trashPrefix: blobs.trashPrefix,
    trashMs,
    touchRecordPrefix: `${blobs.prefix}${TOUCH_RECORD_SEGMENT}/`,
    stagingPrefix: `${blobs.prefix}${STAGING_SEGMENT}/`,
    started,
    stagingYoungSince: started - stagingGraceMs - slackMs,
    isYoung: (lastModified) => lastModified.getTime() >= youngSince,
    // Declared by the store, not probed: where it is false (S3's move is a copy, or a store that
    // does not say) writers leave touch records, and those are the check.
    keepsTimestamps: blobs.objects.capabilities.moveKeepsLastModified,
    ownerMarks: ownerMarksLocations(options.ownerMarks, blobs),
    deletedHashes: new Set(),
    onBlobDeleted: options.onBlobDeleted ?? (() => {}),
    onBlobPurged: options.onBlobPurged ?? (() => {}),
    onOwnerOfTrashed: options.onOwnerOfTrashed ?? (() => {}),
    onOwnerMarkRemoved: options.onOwnerMarkRemoved ?? (() => {}),
    progress: onProgress
      ? (step, done, total) => onProgress(total === undefined ? { step, done } : { step, done, total })
      : () => {},
    report: {
      dryRun,
      scanned: 0,
      referenced: 0,
      young: 0,
      deleted: 0,
      deletedBytes: 0,
      trashed: 0,
      purged: 0,
      purgedBytes: 0,
      restoredFromTrash: 0,
      restored: 0,
      recovered: 0,
      staleStaging: 0,
      staleTouchRecords: 0,
      staleOwnerMarks: 0,
      rootRefs: 0,
      rootRefsBySource: {},
      durationMs: 0,
    },
  };
}

/**
 * Deletes blobs that no root references and that are older than the grace period, without ever
 * deleting a blob that a writer in any process stored or re-referenced during the run:
 *
 * 1. blobs a stopped run left aside are put back;
 * 2. the roots are read completely (a failing source stops the run; nothing is deleted);
 * 3. unreferenced blobs older than the grace period (and, where puts leave touch records, whose
 *    record is too) become candidates;
 * 4. each candidate is moved aside (`<prefix>.gc/<hash>`): from then on a writer's `put` finds
 *    nothing and writes the blob again, and reads fall back to the aside copy;
 * 5. the roots are read again; a candidate is put back when a root now references it or a writer
 *    stored it during the run: on stores that declare `capabilities.moveKeepsLastModified`, its
 *    timestamp changed (a writer touched it before the move); on the others (S3), its touch record
 *    is young (`put` writes one after its write or its comparison, then checks the blob is still
 *    in place). Only the others are deleted, with their records, or with `trashMs` moved to the
 *    trash. Anything not yet decided when the run fails is put back.
 *
 * After step 2, the trash is sorted: what a root references again is put back, what it has kept
 * longer than `trashMs` is deleted for good.
 *
 * Then abandoned staging objects, touch records and owners' marks (`ownerMarks`) of blobs that
 * are gone are removed.
 */
export async function collectGarbage(options: CollectGarbageOptions): Promise<GarbageCollectionReport> {
  const run = openRun(options);
  const { report } = run;
  if (!run.dryRun) await recoverAside(run);

  run.progress("roots", 0);
  const first = await readRoots(run.sources, run.signal);
  report.rootRefs = first.hashes.size;
  run.progress("roots", first.hashes.size);
  report.rootRefsBySource = first.bySource;
  await sortCollectedTrash(run, first.hashes);

  const touchRecords = await listTouchRecords(run);
  const { candidates, scanned } = await chooseCandidates(run, first.hashes, touchRecords);
  if (run.dryRun) await countDryRun(run, candidates);
  else if (candidates.length > 0) await collectCandidates(run, candidates, first);

  await removeStaleStaging(run);
  await removeStaleTouchRecords(run, touchRecords, scanned);
  await removeStaleOwnerMarks(run, scanned);
  report.durationMs = Date.now() - run.started;
  return report;
}
