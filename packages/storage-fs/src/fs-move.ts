import { link, lstat, open, rename, unlink } from "node:fs/promises";
import { describeValue, errnoOf, type PutResult, StowageError } from "@stowage/core";
import { type FsContext, fileInfo, READ_NO_FOLLOW, withLocation } from "./fs-context.js";

/**
 * Renames the file (links it, when create-only, which fails if the target exists); fsyncs the
 * file first and both directories after. The file's fsync is what makes moving a journaled put
 * safe: its journal record names its key, so the bytes must be on disk before the key changes
 * (an fsync of a file already written back costs next to nothing).
 */
export async function moveFile(
  context: FsContext,
  from: string,
  to: string,
  createOnly: boolean,
): Promise<PutResult> {
  const notFound = () => new StowageError("NOT_FOUND", `fs move: ${describeValue(from)} does not exist`);
  const moved = await withLocation(context, from, false, async (source, fromPath) => {
    // Only a file is an object; renaming a directory would move a whole subtree of keys.
    if (!(await fileInfo(fromPath, source.lexical))?.isFile()) throw notFound();
    if (context.fsync) await syncFile(fromPath);
    return withLocation(context, to, true, async (target, toPath) => {
      let created = true;
      try {
        if (createOnly) {
          await link(fromPath, toPath);
          await unlink(fromPath);
        } else {
          created = (await lstat(toPath).catch(() => undefined))?.isFile() !== true;
          await rename(fromPath, toPath);
        }
      } catch (err) {
        const errno = errnoOf(err);
        if (errno === "EEXIST" && createOnly && (await lstat(toPath).catch(() => undefined))) {
          throw new StowageError("ALREADY_EXISTS", `fs move: ${describeValue(to)} already exists`, {
            cause: err,
          });
        }
        if (errno === "ENOENT") throw notFound();
        if (errno === "EEXIST" || errno === "EISDIR") {
          throw new StowageError("CONFLICT", `fs move: ${describeValue(to)} is a directory of other keys`, {
            cause: err,
          });
        }
        throw err;
      }
      const info = await lstat(toPath);
      return { size: info.size, created, directories: [target.lexicalDirectory, source.lexicalDirectory] };
    });
  });
  if (!moved) throw notFound();
  if (context.fsync) {
    const [toDirectory, fromDirectory] = moved.directories;
    await context.syncDirectory(toDirectory!);
    if (fromDirectory !== toDirectory) await context.syncDirectory(fromDirectory!);
  }
  return { key: to, size: moved.size, created: moved.created };
}

async function syncFile(path: string): Promise<void> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, READ_NO_FOLLOW);
  } catch {
    // Gone (or swapped for a link) since the look: the rename below reports it.
    return;
  }
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
