import { constants, readdirSync, readFileSync } from "node:fs";
import { type FileHandle, lstat, open, unlink } from "node:fs/promises";
import { errnoOf } from "@stowage/core";
import { openDirectoryBeneath } from "@stowage/core/fs";
import type { KeyPaths } from "../key-path.js";
import {
  decodeRecord,
  JOURNAL_DIRECTORY,
  type JournalRecord,
  payloadLengthOf,
  RECORD_HEADER_BYTES,
  SEGMENT_MAGIC,
  SEGMENT_NAME,
} from "./journal-record.js";
import { syncRecordedFile, withRecordedFile } from "./recorded-file.js";
import { syncFileSystem } from "./sync-file-system.js";

/**
 * A segment untouched this long belongs to a store that is gone: a live store seals its segment
 * and checkpoints it within `CHECKPOINT_DELAY_MS` (put-journal.ts) of its last write, and never
 * appends to a sealed one. Such a segment is finished (its files fsync'd) and removed by the next recovery.
 */
export const STALE_SEGMENT_MS = 10 * 60 * 1000;

let currentBootId: string | undefined;

/** This machine's boot (Linux's `boot_id`), or `unknown` where there is none to read. */
export function bootId(): string {
  if (currentBootId === undefined) {
    let id = "unknown";
    try {
      const read = readFileSync("/proc/sys/kernel/random/boot_id", "latin1").trim();
      if (/^[0-9a-f-]{36}$/.test(read)) id = read;
    } catch {
      // Not Linux: every segment is replayed, which is safe (below), only slower.
    }
    currentBootId = id;
  }
  return currentBootId;
}

/**
 * Makes every journaled put of an earlier boot whole, before the store serves anything: a record
 * whose file is still at its key (same inode and birth time) but does not hold its body (the
 * machine stopped before the kernel wrote it back) has the body written back in place and
 * fsync'd. A record whose key now holds another file, or nothing, was overtaken by a later
 * operation and is skipped. Replay is idempotent and safe beside a live store (its files already
 * hold their bodies), so where the boot cannot be told (`unknown`) every segment is replayed.
 * Segments of this boot are not replayed (no page the kernel held was lost); stale ones, of any
 * boot, have their files made durable (one syncfs, else an fsync of each) and are removed;
 * the answer is how many were removed (`removeStaleTempFiles` counts them).
 */
export async function recoverJournal(paths: KeyPaths): Promise<number> {
  const now = Date.now();
  let removed = 0;
  const directory = openDirectoryBeneath(paths.rootPath, [JOURNAL_DIRECTORY], { refuseNonDirectories: true });
  if (!directory) return removed;
  try {
    const boot = bootId();
    // One syncfs for every stale segment of this boot, if the file system can be synced.
    let fileSystemSync: Promise<boolean> | undefined;
    const syncOnce = () => {
      fileSystemSync ??= syncFileSystem(paths.rootPath);
      return fileSystemSync;
    };
    for (const name of readdirSync(directory.path).sort()) {
      const match = SEGMENT_NAME.exec(name);
      if (!match) continue;
      const path = `${directory.path}/${name}`;
      const info = await lstat(path).catch(() => undefined);
      // A link or anything but a file, planted under a segment's name, is never opened.
      if (!info?.isFile()) continue;
      const earlierBoot = boot === "unknown" || match[1] !== boot;
      const stale = info.mtimeMs < now - STALE_SEGMENT_MS;
      if (!earlierBoot && !stale) continue;
      if (earlierBoot) {
        // The machine stopped since the segment was written: what it did not write back is lost.
        await forEachRecord(path, (record) => repairRecordedFile(paths, record));
      } else if (!(await syncOnce())) {
        // This boot's stale segment: nothing was lost, its files only have to reach the disk.
        await forEachRecord(path, (record) =>
          syncRecordedFile(paths, record.key, record.identity).then(() => {}),
        );
      }
      if (stale) {
        await unlink(path).catch(() => {});
        removed++;
      }
    }
  } finally {
    directory.close();
  }
  return removed;
}

/**
 * Writes the record's body back into its file when that file no longer holds it.
 * Compared through a read-only descriptor first, so a reader without write access to the root
 * fails only where a repair is needed.
 */
async function repairRecordedFile(paths: KeyPaths, record: JournalRecord): Promise<void> {
  let intact = true;
  const { key, identity, body } = record;
  await withRecordedFile(paths, key, identity, "read", async (handle, size) => {
    intact = size === body.byteLength && (await holds(handle, body));
  });
  if (intact) return;
  // In place, on the file the put renamed: a later put renames another file over the key, so
  // this write can never land on a newer object.
  await withRecordedFile(paths, key, identity, "write", async (handle) => {
    await handle.write(body, 0, body.byteLength, 0);
    await handle.truncate(body.byteLength);
    await handle.sync();
  });
}

async function holds(handle: FileHandle, body: Uint8Array): Promise<boolean> {
  const content = Buffer.alloc(body.byteLength);
  const { bytesRead } = await handle.read(content, 0, content.byteLength, 0);
  return bytesRead === body.byteLength && content.equals(body);
}

/**
 * Calls `use` with each record of a segment in order, stopping at the first that is not whole (a
 * torn write at its end, a flipped bit, a planted file): nothing after it was acknowledged. Reads
 * one record at a time, so a segment of any size costs at most one record of memory.
 */
async function forEachRecord(path: string, use: (record: JournalRecord) => Promise<void>): Promise<void> {
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    // Removed meanwhile by another store's recovery, which finished it. Anything else (no
    // permission to read it) is thrown: records that may be needed are never skipped in silence.
    if (errnoOf(err) === "ENOENT") return;
    throw err;
  }
  try {
    const magic = Buffer.alloc(SEGMENT_MAGIC.byteLength);
    let position = (await handle.read(magic, 0, magic.byteLength, 0)).bytesRead;
    if (position !== magic.byteLength || !magic.equals(SEGMENT_MAGIC)) return;
    const header = Buffer.alloc(RECORD_HEADER_BYTES);
    for (;;) {
      if ((await handle.read(header, 0, RECORD_HEADER_BYTES, position)).bytesRead !== RECORD_HEADER_BYTES)
        return;
      const length = payloadLengthOf(header);
      if (length === undefined) return;
      const payload = Buffer.alloc(length);
      const { bytesRead } = await handle.read(payload, 0, length, position + RECORD_HEADER_BYTES);
      if (bytesRead !== length) return;
      const record = decodeRecord(header, payload);
      if (!record) return;
      await use(record);
      position += RECORD_HEADER_BYTES + length;
    }
  } finally {
    await handle.close();
  }
}
