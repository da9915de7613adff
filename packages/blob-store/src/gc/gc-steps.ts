import { isSha256Hex, type ObjectStore, StowageError, throwIfAborted } from "@stowage/core";
import type { BlobInfo, BlobStore } from "../blob-store.js";
import type { GarbageCollectionProgress, GarbageCollectionReport } from "./collect-garbage.js";
import type { OwnerMarks } from "./owner-marks.js";
import { type BlobRootSource, readRoots } from "./root-sources.js";

// The steps of one garbage collection (`collectGarbage` runs them in order), each over the run.

/** A non-blob object this old under the aside prefix is a timestamp probe an earlier version left when it crashed. */
const STALE_PROBE_MS = 60 * 60 * 1000;

/** One collection: what it runs on, what "young" means in it, and its report so far. */
export interface GcRun {
  blobs: BlobStore;
  objects: ObjectStore;
  dryRun: boolean;
  signal: AbortSignal | undefined;
  sources: BlobRootSource[];
  asidePrefix: string;
  /** Where taken blobs wait, with `trashMs` (see `CollectGarbageOptions.trashMs`). */
  trashPrefix: string;
  trashMs: number;
  touchRecordPrefix: string;
  stagingPrefix: string;
  /** When the run started (ms since the epoch). */
  started: number;
  /** Staging objects stamped at or after this are kept. */
  stagingYoungSince: number;
  /** Stamped within the grace period or during the run. */
  isYoung(lastModified: Date): boolean;
  /** The store's move keeps timestamps; else puts leave touch records (see blob-writes.ts). */
  keepsTimestamps: boolean;
  /** Where owned views keep their marks (`ownerMarks`): the marks of deleted blobs go too. */
  ownerMarks: readonly OwnerMarks[];
  /** Blobs this run deleted (in a dry run: would delete). */
  deletedHashes: Set<string>;
  /** The caller's `onBlobDeleted`, or nothing. */
  onBlobDeleted(blob: { hash: string; size: number }): void;
  /** The caller's `onOwnerOfTrashed`, or nothing. */
  onOwnerOfTrashed(mark: { owner: string; hash: string }): void;
  /** The caller's `onBlobPurged`, or nothing. */
  onBlobPurged(blob: { hash: string; size: number }): void;
  /** The caller's `onOwnerMarkRemoved`, or nothing. */
  onOwnerMarkRemoved(mark: { owner: string; hash: string }): void;
  report: GarbageCollectionReport;
  /** The caller's `onProgress`, or nothing. */
  progress(step: GarbageCollectionProgress["step"], done: number, total?: number): void;
}

/** The roots as read once: every hash, and how many each named source gave. */
type Roots = Awaited<ReturnType<typeof readRoots>>;

/** A candidate moved to its aside key, waiting for the decision. */
interface AsideBlob {
  blob: BlobInfo;
  key: string;
  asideKey: string;
  decided: boolean;
}

/** Puts an aside copy back; when a writer already stored the blob again, the copy is dropped. */
async function putBack({ objects }: GcRun, asideKey: string, key: string): Promise<void> {
  try {
    await objects.move(asideKey, key, { ifNoneMatch: "*" });
  } catch (err) {
    if (StowageError.is(err, "ALREADY_EXISTS")) await objects.delete(asideKey);
    else if (!StowageError.is(err, "NOT_FOUND")) throw err;
  }
}

/** True when a `put` of `hash` wrote its touch record within the grace period or during the run. */
async function hasYoungTouchRecord(run: GcRun, hash: string): Promise<boolean> {
  if (run.keepsTimestamps) return false;
  const record = await run.objects.head(run.touchRecordPrefix + hash, { signal: run.signal });
  return record !== null && run.isYoung(record.lastModified);
}

/** Step 1: blobs a stopped run left aside go back (and an earlier version's stale probes go). */
export async function recoverAside(run: GcRun): Promise<void> {
  const { objects, asidePrefix, signal, report } = run;
  for await (const item of objects.iterate({ prefix: asidePrefix, signal })) {
    const hash = item.key.slice(asidePrefix.length);
    if (isSha256Hex(hash)) {
      await putBack(run, item.key, run.blobs.keyFor(hash));
      report.recovered++;
    } else if (item.lastModified.getTime() < run.started - STALE_PROBE_MS) {
      await objects.delete(item.key, { signal }); // an earlier version's timestamp probe
    }
  }
}

/**
 * Where puts leave touch records, a blob's own timestamp does not show its latest put: the
 * record does. Listed once (a page per thousand), before the blobs.
 */
export async function listTouchRecords(run: GcRun): Promise<Map<string, Date>> {
  const touchRecords = new Map<string, Date>();
  if (run.keepsTimestamps) return touchRecords;
  for await (const item of run.objects.iterate({ prefix: run.touchRecordPrefix, signal: run.signal })) {
    const hash = item.key.slice(run.touchRecordPrefix.length);
    if (isSha256Hex(hash)) touchRecords.set(hash, item.lastModified);
  }
  return touchRecords;
}

/** Step 3: every blob is referenced, young (or recently put) or a candidate. */
export async function chooseCandidates(
  run: GcRun,
  referenced: ReadonlySet<string>,
  touchRecords: ReadonlyMap<string, Date>,
): Promise<{ candidates: BlobInfo[]; scanned: Set<string> }> {
  const { report } = run;
  const recordIsYoung = (hash: string) => {
    const recorded = touchRecords.get(hash);
    return recorded !== undefined && run.isYoung(recorded);
  };
  const candidates: BlobInfo[] = [];
  const scanned = new Set<string>();
  for await (const blob of run.blobs.iterate({ signal: run.signal })) {
    report.scanned++;
    run.progress("scan", report.scanned);
    scanned.add(blob.hash);
    if (referenced.has(blob.hash)) report.referenced++;
    else if (run.isYoung(blob.lastModified) || recordIsYoung(blob.hash)) report.young++;
    else candidates.push(blob);
  }
  return { candidates, scanned };
}

/** A dry run: what steps 4 and 5 would delete, looking at each candidate again, moving nothing. */
export async function countDryRun(run: GcRun, candidates: readonly BlobInfo[]): Promise<void> {
  const { report } = run;
  for (const [index, candidate] of candidates.entries()) {
    run.progress("collect", index, candidates.length);
    const current = await run.blobs.stat(candidate.hash, { signal: run.signal });
    if (!current) continue;
    if (run.isYoung(current.lastModified) || (await hasYoungTouchRecord(run, candidate.hash))) report.young++;
    else {
      report.deleted++;
      report.deletedBytes += current.size;
      run.deletedHashes.add(candidate.hash);
    }
  }
  run.progress("collect", candidates.length, candidates.length);
}

/** Step 4: each candidate moved aside; those gone already or held by another collection are skipped. */
async function moveAside(run: GcRun, candidates: readonly BlobInfo[], aside: AsideBlob[]): Promise<void> {
  for (const blob of candidates) {
    throwIfAborted(run.signal, "collectGarbage");
    const entry: AsideBlob = {
      blob,
      key: run.blobs.keyFor(blob.hash),
      asideKey: run.asidePrefix + blob.hash,
      decided: false,
    };
    try {
      await run.objects.move(entry.key, entry.asideKey, { ifNoneMatch: "*", signal: run.signal });
    } catch (err) {
      // Gone already, or another collection holds it aside: not this run's to decide.
      if (StowageError.is(err, "NOT_FOUND") || StowageError.is(err, "ALREADY_EXISTS")) continue;
      throw err;
    }
    aside.push(entry);
  }
}

/** Step 5: put back what a writer touched or a root now references; delete the rest. */
async function decide(run: GcRun, entry: AsideBlob, second: Roots): Promise<void> {
  const { objects, signal, report } = run;
  const info = await objects.head(entry.asideKey, { signal });
  if (!info) return;
  const touched = run.keepsTimestamps
    ? info.lastModified.getTime() !== entry.blob.lastModified.getTime()
    : await hasYoungTouchRecord(run, entry.blob.hash);
  if (touched || second.hashes.has(entry.blob.hash)) {
    await putBack(run, entry.asideKey, entry.key);
    report.restored++;
    return;
  }
  if (run.trashMs > 0) {
    // Into the trash, its stay counted from now: stamped before the move (a move that keeps the
    // time keeps this one, one that restamps stamps it again), so no crash leaves it in the trash
    // with the blob's own older time; a crash before the move leaves it aside, put back next run.
    await objects.touch(entry.asideKey, { signal });
    await objects.move(entry.asideKey, run.trashPrefix + entry.blob.hash, { signal });
    report.trashed++;
  } else {
    await objects.delete(entry.asideKey, { signal });
  }
  // A put racing this delete writes the blob anew (a fresh timestamp), so its record may go with
  // the old copy.
  if (!run.keepsTimestamps) await objects.delete(run.touchRecordPrefix + entry.blob.hash, { signal });
  report.deleted++;
  report.deletedBytes += info.size;
  run.deletedHashes.add(entry.blob.hash);
  run.onBlobDeleted({ hash: entry.blob.hash, size: info.size });
}

/** Steps 4 and 5; anything undecided when they fail is put back. */
export async function collectCandidates(
  run: GcRun,
  candidates: readonly BlobInfo[],
  first: Roots,
): Promise<void> {
  const aside: AsideBlob[] = [];
  try {
    await moveAside(run, candidates, aside);
    const second = aside.length > 0 ? await readRoots(run.sources, run.signal) : first;
    for (const [index, entry] of aside.entries()) {
      throwIfAborted(run.signal, "collectGarbage");
      run.progress("collect", index, aside.length);
      await decide(run, entry, second);
      entry.decided = true;
    }
    run.progress("collect", aside.length, aside.length);
  } catch (err) {
    // Only a completed second reading of the roots may delete: everything undecided goes back.
    // What cannot go back now (the store is down) is put back by the next run.
    for (const entry of aside) {
      if (!entry.decided) await putBack(run, entry.asideKey, entry.key).catch(() => {});
    }
    throw err;
  }
}

/**
 * The trash's blobs: one a root references again comes back (a root source fixed since the run
 * that took it); one kept longer than `trashMs` (any, where it is 0) is deleted for good. A dry run
 * counts both. Stamped when they went there (`decide`), so a blob's own age does not count.
 */
export async function sortCollectedTrash(run: GcRun, referenced: ReadonlySet<string>): Promise<void> {
  const { blobs, objects, signal, report } = run;
  const due = run.started - run.trashMs;
  for await (const item of objects.iterate({ prefix: run.trashPrefix, signal })) {
    const hash = item.key.slice(run.trashPrefix.length);
    if (!isSha256Hex(hash)) continue;
    throwIfAborted(signal, "collectGarbage");
    if (referenced.has(hash)) {
      if (!run.dryRun) await blobs.restoreCollected(hash, { signal });
      report.restoredFromTrash++;
      continue;
    }
    if (run.trashMs > 0 && item.lastModified.getTime() > due) continue;
    if (!run.dryRun) {
      await objects.delete(item.key, { signal });
      run.onBlobPurged({ hash, size: item.size });
    }
    report.purged++;
    report.purgedBytes += item.size;
  }
}

/** Abandoned staging objects of interrupted streamed puts. */
export async function removeStaleStaging(run: GcRun): Promise<void> {
  for await (const item of run.objects.iterate({ prefix: run.stagingPrefix, signal: run.signal })) {
    if (item.lastModified.getTime() >= run.stagingYoungSince) continue;
    if (!run.dryRun) await run.objects.delete(item.key, { signal: run.signal });
    run.report.staleStaging++;
  }
}

/**
 * Records of blobs deleted some other way (`delete`, a crash): removed once neither copy of the
 * blob exists. Only then: a record may be the only sign of a recent put of a stored blob.
 */
export async function removeStaleTouchRecords(
  run: GcRun,
  touchRecords: ReadonlyMap<string, Date>,
  scanned: ReadonlySet<string>,
): Promise<void> {
  const { objects, signal } = run;
  for (const hash of touchRecords.keys()) {
    if (scanned.has(hash)) continue;
    throwIfAborted(signal, "collectGarbage");
    if ((await objects.head(run.blobs.keyFor(hash), { signal })) !== null) continue;
    if ((await objects.head(run.asidePrefix + hash, { signal })) !== null) continue;
    if (!run.dryRun) await objects.delete(run.touchRecordPrefix + hash, { signal });
    run.report.staleTouchRecords++;
  }
}
