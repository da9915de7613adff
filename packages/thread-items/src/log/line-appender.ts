import { Buffer } from "node:buffer";
import { constants } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { join } from "node:path";
import { errnoOf, StowageError } from "@stowage/core";
import { type OpenedDirectory, openDirectoryBeneath, symlinkRefused } from "@stowage/core/fs";

const NEWLINE = 0x0a;
const APPEND_NO_FOLLOW = constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW;

export interface LineAppenderOptions {
  /** The directory the caller gave (the worker's home): a link there is followed, none below it. */
  root: string;
  /** The file below `root`, `/`-separated; it and its directories are created on the first append. */
  relativePath: string;
  /** fsync every append (and, once, the new directory entries). */
  fsync: boolean;
}

/** Appends whole lines to one file, safely alongside other processes appending to it. */
export interface LineAppender {
  /**
   * Appends `line` (ending in a newline) in one `write(2)` on an `O_APPEND` descriptor, so that
   * concurrent appenders never interleave partial lines; fsyncs when asked. Returns the bytes
   * written (one more than the line when a torn last line had to be closed first).
   */
  append(line: Uint8Array): Promise<number>;
}

function split(relativePath: string): { directories: string[]; name: string } {
  const segments = relativePath.split("/");
  return { name: segments.pop()!, directories: segments };
}

/** Opens the file below its directory without following a link; a link there is FORBIDDEN. */
async function openFile(
  directory: OpenedDirectory,
  name: string,
  flags: number,
  lexical: string,
): Promise<FileHandle> {
  try {
    return await open(`${directory.path}/${name}`, flags, 0o644);
  } catch (err) {
    if (errnoOf(err) === "ELOOP") throw symlinkRefused(lexical, { cause: err });
    throw err;
  }
}

// A crash can leave a last line without its newline; a new line must not be glued to it.
async function endsWithNewline(handle: FileHandle): Promise<boolean> {
  const { size } = await handle.stat();
  if (size === 0) return true;
  const last = Buffer.alloc(1);
  await handle.read(last, 0, 1, size - 1);
  return last[0] === NEWLINE;
}

/**
 * The one append path of this package (thread logs). Every directory below `root` and the file
 * itself are opened without following a link, so a link planted anywhere below the root (before
 * or during an append) is refused rather than written through. Errors are raw system errors or
 * StowageErrors; the caller maps them with the context it knows.
 */
export function createLineAppender(options: LineAppenderOptions): LineAppender {
  const { root, relativePath, fsync } = options;
  const { directories, name } = split(relativePath);
  const lexical = join(root, relativePath);
  let directoryDurable = false;

  // Once per appender: the new file's (and new directories') entries must survive a crash too.
  async function makeDirectoryDurable(): Promise<void> {
    if (!fsync || directoryDurable) return;
    for (let depth = directories.length; depth >= 1; depth--) {
      const directory = openDirectoryBeneath(root, directories.slice(0, depth));
      if (!directory) continue;
      try {
        const handle = await open(directory.path, "r");
        await handle.sync().finally(() => handle.close());
      } finally {
        directory.close();
      }
    }
    directoryDurable = true;
  }

  async function append(line: Uint8Array): Promise<number> {
    let handle: FileHandle | undefined;
    try {
      const directory = openDirectoryBeneath(root, directories, { create: true })!;
      try {
        handle = await openFile(directory, name, APPEND_NO_FOLLOW, lexical);
      } finally {
        directory.close();
      }
      const body = (await endsWithNewline(handle)) ? line : Buffer.concat([Buffer.of(NEWLINE), line]);
      // One write(2) on an O_APPEND descriptor: the kernel places the whole line at the end.
      const { bytesWritten } = await handle.write(body, 0, body.length, null);
      if (bytesWritten !== body.length) {
        throw new StowageError(
          "STORAGE_FULL",
          `append to ${lexical}: only ${bytesWritten} of ${body.length} bytes were written`,
        );
      }
      if (fsync) await handle.sync();
      await handle.close();
      handle = undefined;
      await makeDirectoryDurable();
      return body.length;
    } finally {
      await handle?.close().catch(() => {});
    }
  }

  return { append };
}
