import { closeSync, constants, fstatSync, fsync, lstatSync, openSync } from "node:fs";
import { promisify } from "node:util";
import type { KeyPaths } from "../key-path.js";
import { createIdleTimer } from "./idle-timer.js";
import { encodeRecord, type FileIdentity, type JournalRecord } from "./journal-record.js";
import {
  appendToSegment,
  closeSegment,
  createSegment,
  type JournaledFile,
  removeSegment,
  reopenSegment,
  type Segment,
} from "./journal-segment.js";
import { syncRecordedFile } from "./recorded-file.js";
import { syncFileSystem } from "./sync-file-system.js";

const fsyncAsync = promisify(fsync);

/** A segment is sealed (no more appends) once this long, so a replay or a checkpoint reads a bounded file. */
const SEGMENT_MAX_BYTES = 16 * 1024 * 1024;
/**
 * How long after a write the files it journaled are made durable (one syncfs, else an fsync of
 * each) and its segment removed. By then the kernel has usually written them back on its own
 * (Linux writes dirty pages older than 30 s), so the sync finds little to do; an exit before
 * then leaves the segment to the next store opened on the root (journal-recovery.ts).
 */
const CHECKPOINT_DELAY_MS = 35_000;
/**
 * How long a store keeps its segment open after its last batch (at least; at most twice): puts
 * in a steady stream reuse the descriptor (reopening it cost five system calls, a tenth of a
 * small put made one at a time), and an idle store holds none, so its root can be unmounted.
 */
const SEGMENT_IDLE_CLOSE_MS = 100;
/**
 * A queue of up to this many puts is written as one batch; a longer one, half at a time. 10,000
 * puts of 4 KiB with 32 in flight took 0.76-0.84x the time half at a time (medians of 16 and 14
 * paired rounds, 2026-12-05); with 16 or fewer in flight every batch is whole, as before.
 */
const WHOLE_BATCH_MAX = 16;

/** A put whose record waits to be written: a batch is some of them, written and synced together. */
interface WaitingPut {
  readonly record: Buffer;
  readonly file: JournaledFile;
  readonly tempPath: string;
  resolve(): void;
  reject(err: unknown): void;
}

export interface PutJournal {
  /**
   * Appends a put's record; resolves once it is durable. Puts that append while a batch is
   * being written and synced share the next batch's one write and one fdatasync (group commit);
   * when more than {@link WHOLE_BATCH_MAX} wait, the next batch takes the first half of them.
   * `tempPath` is the put's temp file, fsync'd instead should the segment be removed under us.
   */
  append(record: JournalRecord, tempPath: string): Promise<void>;
  /** Makes the files of every segment written so far durable, then removes the segments. */
  checkpoint(): Promise<void>;
  /** False once this file system showed that a file's identity does not survive its rename. */
  usable(): boolean;
  /**
   * Until confirmed once: checks that the file a put just published at `path` still has the
   * identity recorded before its rename (a birth time, which replay needs to tell the file from a
   * later one). Where it has not (no birth times, or Node reporting the change time instead, as
   * without statx), this put's file is fsync'd on the spot and later puts skip the journal.
   */
  confirmIdentity(path: string, identity: FileIdentity): Promise<void>;
}

/**
 * The put journal of one store: small fsync'd puts write their temp file without an fsync, append
 * their body here, and publish once the journal is durable; many puts then cost one fdatasync of
 * the journal (plus the directory's shared fsync) instead of one fsync of each file. The files
 * are made durable later by {@link PutJournal.checkpoint}, off the puts' path; until then a crash of
 * the machine is repaired from the journal (journal-recovery.ts). Each store writes segments of
 * its own (`<boot id>.<random>.log`), so processes never append to one file.
 */
export function createPutJournal(paths: KeyPaths, bootId: string): PutJournal {
  let segment: Segment | undefined;
  const sealed: Segment[] = [];
  const waiting: WaitingPut[] = [];
  let running: Promise<void> | undefined;
  let checkpointTimer: NodeJS.Timeout | undefined;
  let checkpointing: Promise<void> | undefined;
  const idle = createIdleTimer(
    SEGMENT_IDLE_CLOSE_MS,
    () => running !== undefined,
    () => {
      if (segment) closeSegment(segment);
    },
  );
  let identity: "unknown" | "kept" | "lost" = "unknown";

  function seal(current: Segment): void {
    if (segment === current) segment = undefined;
    closeSegment(current);
    sealed.push(current);
  }

  /** The segment to append to, open: the current one reopened after an idle spell, else a new one. */
  async function openForAppend(): Promise<Segment & { fd: number }> {
    if (segment && segment.fd === undefined) {
      const reopened = reopenSegment(paths, segment.name);
      // Gone (a recovery took it for a dead store's): its records were synced; start another.
      if (reopened === undefined) seal(segment);
      else segment.fd = reopened;
    }
    if (!segment) segment = await createSegment(paths, bootId);
    return segment as Segment & { fd: number };
  }

  async function write(batch: WaitingPut[]): Promise<void> {
    const current = await openForAppend();
    const bytes = Buffer.concat(batch.map((put) => put.record));
    try {
      await appendToSegment(current, bytes);
    } catch (err) {
      // A torn record may end the segment now: nothing is appended after it, so replay stops
      // where this batch began and every earlier record still counts.
      seal(current);
      throw err;
    }
    current.size += bytes.byteLength;
    current.files.push(...batch.map((put) => put.file));
    if (fstatSync(current.fd).nlink === 0) {
      // Removed while in use (a recovery that took it for a dead store's, after a very long
      // pause of this process): its records no longer count, so the files are synced instead.
      seal(current);
      await Promise.all(batch.map((put) => syncPath(put.tempPath)));
    } else if (current.size >= SEGMENT_MAX_BYTES) {
      seal(current);
    }
    scheduleCheckpoint();
  }

  async function flushQueued(): Promise<void> {
    // Yield once so that puts appending in the same turn of the event loop join the first batch.
    await Promise.resolve();
    while (waiting.length > 0) {
      const batch = waiting.splice(0, batchSize(waiting.length));
      try {
        await write(batch);
        for (const put of batch) put.resolve();
      } catch (err) {
        for (const put of batch) put.reject(err);
      }
    }
    running = undefined;
    idle.touch();
  }

  function scheduleCheckpoint(): void {
    if (checkpointTimer) return;
    checkpointTimer = setTimeout(() => {
      checkpointTimer = undefined;
      // In the background: a failure leaves the segment on disk, for recovery to finish later.
      checkpoint().catch(() => {});
    }, CHECKPOINT_DELAY_MS);
    // A pending checkpoint never keeps a process alive: recovery finishes what an exit leaves.
    checkpointTimer.unref();
  }

  async function checkpointSealed(): Promise<void> {
    while (running) await running;
    if (segment) seal(segment);
    // Only segments sealed by now: a syncfs covers the files written before it starts.
    const finishing = sealed.splice(0);
    try {
      const fileSystemSynced = finishing.length > 0 && (await syncFileSystem(paths.rootPath));
      while (finishing.length > 0) {
        const next = finishing[0]!;
        if (!fileSystemSynced) {
          for (const file of next.files) await syncRecordedFile(paths, file.key, file.identity);
        }
        removeSegment(paths, next.name);
        finishing.shift();
      }
    } finally {
      // What could not be finished (an fsync failed) waits for the next checkpoint, or for a
      // recovery once stale: the segment stays on disk until then.
      sealed.unshift(...finishing);
    }
  }

  function checkpoint(): Promise<void> {
    checkpointing ??= checkpointSealed().finally(() => {
      checkpointing = undefined;
    });
    return checkpointing;
  }

  return {
    append(record, tempPath) {
      const written = new Promise<void>((resolve, reject) => {
        const file = { key: record.key, identity: record.identity };
        waiting.push({ record: encodeRecord(record), file, tempPath, resolve, reject });
      });
      running ??= flushQueued();
      return written;
    },
    checkpoint,
    usable: () => identity !== "lost",
    async confirmIdentity(path, recorded) {
      if (identity === "kept") return;
      const now = lstatSync(path, { bigint: true, throwIfNoEntry: false });
      // Replaced or removed since by a later operation: nothing learnt, and nothing at stake.
      if (now?.ino !== recorded.ino) return;
      if (now.birthtimeNs === recorded.birthtimeNs && recorded.birthtimeNs !== 0n) {
        identity = "kept";
        return;
      }
      identity = "lost";
      await syncPath(path);
    },
  };
}

/**
 * How many of the waiting puts the next batch takes: all of them, up to {@link WHOLE_BATCH_MAX};
 * of a longer queue, half (the first to arrive). With every waiting put in one batch, puts in
 * flight together take turns with the flush: all wait on it, then all publish and make their next
 * temp files while the disk idles. Half at a time, the first half publishes and starts its next
 * puts while the second half's flush runs. Batches stay one at a time, so a failed write still
 * ends its segment before anything is appended after it.
 */
function batchSize(waitingCount: number): number {
  return waitingCount <= WHOLE_BATCH_MAX ? waitingCount : Math.ceil(waitingCount / 2);
}

async function syncPath(path: string): Promise<void> {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    await fsyncAsync(fd);
  } finally {
    closeSync(fd);
  }
}
