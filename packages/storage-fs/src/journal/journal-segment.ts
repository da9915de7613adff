import { randomBytes } from "node:crypto";
import { closeSync, constants, fdatasync, openSync, unlinkSync, writeSync } from "node:fs";
import { promisify } from "node:util";
import { fsyncDirectory, type OpenedDirectory, openDirectoryBeneath } from "@stowage/core/fs";
import type { KeyPaths } from "../key-path.js";
import { type FileIdentity, JOURNAL_DIRECTORY, SEGMENT_MAGIC } from "./journal-record.js";

const fdatasyncAsync = promisify(fdatasync);

/** A put whose record a segment holds: what its checkpoint makes durable. */
export interface JournaledFile {
  readonly key: string;
  readonly identity: FileIdentity;
}

/** One segment file of a store's journal, as its store tracks it. */
export interface Segment {
  readonly name: string;
  /** Open while its store writes batches; closed after an idle spell, so an idle store holds no descriptor. */
  fd: number | undefined;
  size: number;
  readonly files: JournaledFile[];
}

/** Runs `use` with the journal directory open (never through a link); undefined when it is missing. */
function withJournalDirectory<T>(
  paths: KeyPaths,
  create: boolean,
  use: (directory: OpenedDirectory, created: boolean) => T,
): T | undefined {
  let created = false;
  const directory = openDirectoryBeneath(paths.rootPath, [JOURNAL_DIRECTORY], {
    create,
    refuseNonDirectories: true,
    onCreate: () => {
      created = true;
    },
  });
  if (!directory) return undefined;
  try {
    return use(directory, created);
  } finally {
    directory.close();
  }
}

/** Makes a new segment, open; its name (and the journal directory's) is durable before any record in it counts. */
export async function createSegment(paths: KeyPaths, bootId: string): Promise<Segment> {
  // Random: names of stores and processes sharing the root never meet ("wx" refuses one that does).
  const name = `${bootId}.${randomBytes(8).toString("hex")}.log`;
  const made = withJournalDirectory(paths, true, (directory, created) => {
    // Readable like the objects it holds the bodies of: a reader of the root can check them.
    const fd = openSync(`${directory.path}/${name}`, "wx", 0o644);
    // The directory's path, not its descriptor's: the syncs below outlive this handle.
    return { fd, created };
  })!;
  try {
    writeSync(made.fd, SEGMENT_MAGIC);
    await fsyncDirectory(`${paths.rootPath}/${JOURNAL_DIRECTORY}`);
    // A journal directory made just now is an entry of the root, durable only once it is synced.
    if (made.created) await fsyncDirectory(paths.rootPath);
  } catch (err) {
    closeSync(made.fd);
    // An empty segment left behind holds no record: harmless, removed once stale.
    removeSegment(paths, name);
    throw err;
  }
  return { name, fd: made.fd, size: SEGMENT_MAGIC.byteLength, files: [] };
}

/** The descriptor of a store's own segment, opened again for appending; undefined when it is gone. */
export function reopenSegment(paths: KeyPaths, name: string): number | undefined {
  return withJournalDirectory(paths, false, (directory) => {
    try {
      return openSync(`${directory.path}/${name}`, constants.O_WRONLY | constants.O_NOFOLLOW);
    } catch {
      return undefined;
    }
  });
}

/** Appends `bytes` at the segment's end and waits until they are durable. */
export async function appendToSegment(segment: Segment & { fd: number }, bytes: Buffer): Promise<void> {
  let written = 0;
  while (written < bytes.byteLength) {
    written += writeSync(segment.fd, bytes, written, bytes.byteLength - written, segment.size + written);
  }
  await fdatasyncAsync(segment.fd);
}

export function closeSegment(segment: Segment): void {
  if (segment.fd === undefined) return;
  closeSync(segment.fd);
  segment.fd = undefined;
}

/** Removes a segment whose files are durable; one already removed (by a recovery that found it stale) is fine. */
export function removeSegment(paths: KeyPaths, name: string): void {
  withJournalDirectory(paths, false, (directory) => {
    try {
      unlinkSync(`${directory.path}/${name}`);
    } catch {
      // Gone already: whoever removed it made its files durable first.
    }
  });
}
