import { describeValue, isSha256Hex, StowageError, throwIfAborted } from "@stowage/core";
import { GC_ASIDE_SEGMENT, STAGING_SEGMENT, TOUCH_RECORD_SEGMENT } from "../blob-layout.js";
import type { BlobInfo, BlobStore } from "../blob-store.js";
import { isOwnedBlobStore } from "../owned-blob-store.js";
import { type BlobRootsOption, readRoots, rootSources } from "./root-sources.js";

/** Blobs younger than this are never collected: a writer may not have persisted its ref yet. */
export const DEFAULT_GC_GRACE_MS = 24 * 60 * 60 * 1000;
/**
 * Staging objects this old are taken for the leftovers of interrupted streamed puts. Apart from
 * `graceMs`: a collection run with `graceMs: 0` must not take the bytes of a put still streaming
 * (a staging object is stamped by its last write, then moved at once).
 */
export const DEFAULT_STAGING_GRACE_MS = 60 * 60 * 1000;

/**
 * Blobs stamped up to this long before the run started are also kept: backends that keep whole
 * seconds (S3) round a write made during the run down to before it began.
 */
export const DEFAULT_TIMESTAMP_SLACK_MS = 1000;

/** A non-blob object this old under the aside prefix is a timestamp probe an earlier version left when it crashed. */
const STALE_PROBE_MS = 60 * 60 * 1000;

/** Options of {@link collectGarbage}. */
export interface CollectGarbageOptions {
  blobs: BlobStore;
  /**
   * Every ref (or hash) still in use, read twice (before choosing candidates, and again before
   * deleting them): named root sources (`[{ name: "sessions", refs: () => scanFilesForBlobRefs(dir) }]`),
   * a function returning refs, or a list. A source that fails stops the run, deleting nothing.
   */
  roots: BlobRootsOption;
  /** Default {@link DEFAULT_GC_GRACE_MS}. */
  graceMs?: number;
  /** Default {@link DEFAULT_TIMESTAMP_SLACK_MS}. */
  timestampSlackMs?: number;
  /** Staging objects of streamed puts younger than this are kept. Default {@link DEFAULT_STAGING_GRACE_MS}. */
  stagingGraceMs?: number;
  /** Report what would be deleted without deleting (or moving) anything. Default false. */
  dryRun?: boolean;
  signal?: AbortSignal;
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
  /** Blobs deleted (or, in a dry run, that would be). */
  deleted: number;
  deletedBytes: number;
  /** Candidates moved aside and then put back: a writer touched them, or a root referenced them by the second reading. */
  restored: number;
  /** Blobs a collection that stopped half-way had left aside, put back at the start of this run. */
  recovered: number;
  /** Abandoned staging objects of interrupted streamed puts removed. */
  staleStaging: number;
  /** Touch records (stores whose move restamps) of blobs that are gone, removed. */
  staleTouchRecords: number;
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

/** A candidate moved to its aside key, waiting for the decision. */
interface AsideBlob {
  blob: BlobInfo;
  key: string;
  asideKey: string;
  decided: boolean;
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
 *    in place). Only the others are deleted, with their records. Anything not yet decided when
 *    the run fails is put back.
 */
export async function collectGarbage(options: CollectGarbageOptions): Promise<GarbageCollectionReport> {
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
  const graceMs = nonNegative(options.graceMs, "graceMs", DEFAULT_GC_GRACE_MS);
  const slackMs = nonNegative(options.timestampSlackMs, "timestampSlackMs", DEFAULT_TIMESTAMP_SLACK_MS);
  const stagingGraceMs = nonNegative(options.stagingGraceMs, "stagingGraceMs", DEFAULT_STAGING_GRACE_MS);
  const sources = rootSources(options.roots);
  const objects = blobs.objects;
  const asidePrefix = `${blobs.prefix}${GC_ASIDE_SEGMENT}/`;
  const touchRecordPrefix = `${blobs.prefix}${TOUCH_RECORD_SEGMENT}/`;
  const started = Date.now();
  // Anything stamped at or after this is young: written during the run or within the grace period.
  const youngSince = started - graceMs - slackMs;
  const stagingYoungSince = started - stagingGraceMs - slackMs;
  const isYoung = (lastModified: Date) => lastModified.getTime() >= youngSince;
  // Declared by the store, not probed: where it is false (S3's move is a copy, or a store that does
  // not say) writers leave touch records, and those are the check.
  const keepsTimestamps = objects.capabilities.moveKeepsLastModified;
  /** True when a `put` of `hash` wrote its touch record within the grace period or during the run. */
  async function hasYoungTouchRecord(hash: string): Promise<boolean> {
    if (keepsTimestamps) return false;
    const record = await objects.head(touchRecordPrefix + hash, { signal });
    return record !== null && isYoung(record.lastModified);
  }

  const report: GarbageCollectionReport = {
    dryRun,
    scanned: 0,
    referenced: 0,
    young: 0,
    deleted: 0,
    deletedBytes: 0,
    restored: 0,
    recovered: 0,
    staleStaging: 0,
    staleTouchRecords: 0,
    rootRefs: 0,
    rootRefsBySource: {},
    durationMs: 0,
  };

  /** Puts an aside copy back; when a writer already stored the blob again, the copy is dropped. */
  async function putBack(asideKey: string, key: string): Promise<void> {
    try {
      await objects.move(asideKey, key, { ifNoneMatch: "*" });
    } catch (err) {
      if (StowageError.is(err, "ALREADY_EXISTS")) await objects.delete(asideKey);
      else if (!StowageError.is(err, "NOT_FOUND")) throw err;
    }
  }

  if (!dryRun) {
    for await (const item of objects.iterate({ prefix: asidePrefix, signal })) {
      const hash = item.key.slice(asidePrefix.length);
      if (isSha256Hex(hash)) {
        await putBack(item.key, blobs.keyFor(hash));
        report.recovered++;
      } else if (item.lastModified.getTime() < started - STALE_PROBE_MS) {
        await objects.delete(item.key, { signal }); // an earlier version's timestamp probe
      }
    }
  }

  const first = await readRoots(sources, signal);
  report.rootRefs = first.hashes.size;
  report.rootRefsBySource = first.bySource;

  // Where puts leave touch records, a blob's own timestamp does not show its latest put: the
  // record does. Listed once (a page per thousand), before the blobs.
  const touchRecords = new Map<string, Date>();
  if (!keepsTimestamps) {
    for await (const item of objects.iterate({ prefix: touchRecordPrefix, signal })) {
      const hash = item.key.slice(touchRecordPrefix.length);
      if (isSha256Hex(hash)) touchRecords.set(hash, item.lastModified);
    }
  }
  const recordIsYoung = (hash: string) => {
    const recorded = touchRecords.get(hash);
    return recorded !== undefined && isYoung(recorded);
  };

  const candidates: BlobInfo[] = [];
  const scanned = new Set<string>();
  for await (const blob of blobs.iterate({ signal })) {
    report.scanned++;
    scanned.add(blob.hash);
    if (first.hashes.has(blob.hash)) report.referenced++;
    else if (isYoung(blob.lastModified) || recordIsYoung(blob.hash)) report.young++;
    else candidates.push(blob);
  }

  if (dryRun) {
    for (const candidate of candidates) {
      const current = await blobs.stat(candidate.hash, { signal });
      if (!current) continue;
      if (isYoung(current.lastModified) || (await hasYoungTouchRecord(candidate.hash))) report.young++;
      else {
        report.deleted++;
        report.deletedBytes += current.size;
      }
    }
  } else if (candidates.length > 0) {
    const aside: AsideBlob[] = [];
    try {
      for (const blob of candidates) {
        throwIfAborted(signal, "collectGarbage");
        const entry: AsideBlob = {
          blob,
          key: blobs.keyFor(blob.hash),
          asideKey: asidePrefix + blob.hash,
          decided: false,
        };
        try {
          await objects.move(entry.key, entry.asideKey, { ifNoneMatch: "*", signal });
        } catch (err) {
          // Gone already, or another collection holds it aside: not this run's to decide.
          if (StowageError.is(err, "NOT_FOUND") || StowageError.is(err, "ALREADY_EXISTS")) continue;
          throw err;
        }
        aside.push(entry);
      }
      const second = aside.length > 0 ? await readRoots(sources, signal) : first;
      for (const entry of aside) {
        throwIfAborted(signal, "collectGarbage");
        const info = await objects.head(entry.asideKey, { signal });
        if (info) {
          const touched = keepsTimestamps
            ? info.lastModified.getTime() !== entry.blob.lastModified.getTime()
            : await hasYoungTouchRecord(entry.blob.hash);
          if (touched || second.hashes.has(entry.blob.hash)) {
            await putBack(entry.asideKey, entry.key);
            report.restored++;
          } else {
            await objects.delete(entry.asideKey, { signal });
            // A put racing this delete writes the blob anew (a fresh timestamp), so its record
            // may go with the old copy.
            if (!keepsTimestamps) await objects.delete(touchRecordPrefix + entry.blob.hash, { signal });
            report.deleted++;
            report.deletedBytes += info.size;
          }
        }
        entry.decided = true;
      }
    } catch (err) {
      // Only a completed second reading of the roots may delete: everything undecided goes back.
      // What cannot go back now (the store is down) is put back by the next run.
      for (const entry of aside) {
        if (!entry.decided) await putBack(entry.asideKey, entry.key).catch(() => {});
      }
      throw err;
    }
  }

  const stagingPrefix = `${blobs.prefix}${STAGING_SEGMENT}/`;
  for await (const item of objects.iterate({ prefix: stagingPrefix, signal })) {
    if (item.lastModified.getTime() >= stagingYoungSince) continue;
    if (!dryRun) await objects.delete(item.key, { signal });
    report.staleStaging++;
  }

  // Records of blobs deleted some other way (`delete`, a crash): removed once neither copy of
  // the blob exists. Only then: a record may be the only sign of a recent put of a stored blob.
  for (const hash of touchRecords.keys()) {
    if (scanned.has(hash)) continue;
    throwIfAborted(signal, "collectGarbage");
    if ((await objects.head(blobs.keyFor(hash), { signal })) !== null) continue;
    if ((await objects.head(asidePrefix + hash, { signal })) !== null) continue;
    if (!dryRun) await objects.delete(touchRecordPrefix + hash, { signal });
    report.staleTouchRecords++;
  }

  report.durationMs = Date.now() - started;
  return report;
}
