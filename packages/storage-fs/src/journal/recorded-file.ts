import { constants } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { errnoOf, keyProblem, StowageError } from "@stowage/core";
import type { KeyPaths } from "../key-path.js";
import type { FileIdentity } from "./journal-record.js";

const RECORDED_NO_FOLLOW = constants.O_NOFOLLOW | constants.O_NONBLOCK;
const NOT_THE_RECORDED_FILE = new Set(["ENOENT", "ENOTDIR", "ELOOP", "EISDIR", "ENXIO", "EAGAIN"]);

/**
 * Runs `use` with the file at `key` open, when it is still the file a journaled put renamed there
 * (same inode, same birth time); otherwise (the key removed, replaced, moved away, a link, a
 * hostile key in a planted segment) nothing is done and the answer is false. Another file at
 * the key was written by a later operation, which made its own bytes durable: never touched.
 */
export async function withRecordedFile(
  paths: KeyPaths,
  key: string,
  identity: FileIdentity,
  mode: "read" | "write",
  use: (handle: FileHandle, size: number) => Promise<void>,
): Promise<boolean> {
  if (keyProblem(key) !== undefined) return false;
  let location: ReturnType<KeyPaths["locate"]>;
  try {
    location = paths.locate(key, false);
  } catch (err) {
    // A reserved segment, or a link where a directory of the key should be: not a recorded file.
    const refusedLink = StowageError.is(err, "FORBIDDEN") && err.reason === "SYMLINK_REFUSED";
    if (StowageError.is(err, "INVALID_INPUT") || refusedLink) return false;
    throw err;
  }
  if (!location) return false;
  try {
    let handle: FileHandle;
    try {
      const access = mode === "write" ? constants.O_RDWR : constants.O_RDONLY;
      handle = await open(`${location.directory.path}/${location.name}`, access | RECORDED_NO_FOLLOW);
    } catch (err) {
      // Missing, a link, a directory, a FIFO without a writer: not the file the put renamed. Any
      // other failure (a read-only file system, no permission) is thrown: a file left unrepaired
      // must not pass in silence.
      if (NOT_THE_RECORDED_FILE.has(errnoOf(err) ?? "")) return false;
      throw err;
    }
    try {
      const info = await handle.stat({ bigint: true });
      if (!info.isFile() || info.ino !== identity.ino || info.birthtimeNs !== identity.birthtimeNs) {
        return false;
      }
      await use(handle, Number(info.size));
      return true;
    } finally {
      await handle.close();
    }
  } finally {
    location.directory.close();
  }
}

/** fsyncs the file a journaled put renamed to `key`, if it is still there. */
export async function syncRecordedFile(paths: KeyPaths, key: string, identity: FileIdentity) {
  return withRecordedFile(paths, key, identity, "read", (handle) => handle.sync());
}
