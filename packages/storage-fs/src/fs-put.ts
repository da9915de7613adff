import { describeValue, errnoOf, type PutResult, StowageError } from "@stowage/core";
import { writeTempFile } from "@stowage/core/fs";
import { type FsContext, withLocation } from "./fs-context.js";
import {
  asyncCalls,
  type SmallTempFile,
  SYNC_WRITE_MAX_BYTES,
  syncCalls,
  writeSmallTempFile,
} from "./small-write.js";

/**
 * Writes the body to a temp file in the key's directory, then publishes it: `link()` when
 * create-only (it fails if the key exists), else `rename()` over the key; then fsyncs the
 * directory. A reader sees the old object or the new one, never a part. A small fsync'd body is
 * not fsync'd in its file: it is appended to the store's journal, which is made durable before
 * the publish (many puts share one fdatasync), and the file is fsync'd later (put-journal.ts).
 */
export async function putFile(
  context: FsContext,
  key: string,
  body: Uint8Array | ReadableStream<Uint8Array>,
  createOnly: boolean,
  signal: AbortSignal | undefined,
): Promise<PutResult> {
  const { fsync, journal } = context;
  const stored = await withLocation(context, key, true, async (location, path) => {
    const smallBody = body instanceof Uint8Array && body.byteLength <= SYNC_WRITE_MAX_BYTES;
    const journaled = smallBody && fsync && journal?.usable() ? journal : undefined;
    // Small bodies are written synchronously, unless they are fsync'd one by one.
    const small = smallBody && (!fsync || journaled !== undefined);
    const calls = small ? syncCalls : asyncCalls;
    // Whether the key is a file already (the result's `created`): asked on the thread pool
    // while a large body is written (one round trip off the put's path), and synchronously
    // just before the rename of a small one (no round trip at all). Either way before the
    // rename; a concurrent writer can race it either way.
    const existed = createOnly || small ? undefined : calls.isFile(path);
    const temp: SmallTempFile = small
      ? await writeSmallTempFile(location.directory.path, body, journaled !== undefined)
      : await writeTempFile(location.directory.path, body, { fsync, signal });
    let created: boolean;
    try {
      // Durable before the publish: a file whose bytes the kernel has not written yet is never
      // at a key without the journal holding them.
      if (journaled)
        await journaled.append({ key, identity: temp.identity!, body: body as Uint8Array }, temp.path);
      if (createOnly) {
        // link() fails if the target exists: an atomic create-only publish, unlike rename().
        try {
          await calls.link(temp.path, path);
        } catch (err) {
          if (errnoOf(err) === "EEXIST") {
            throw new StowageError("ALREADY_EXISTS", `fs put: ${describeValue(key)} already exists`, {
              cause: err,
            });
          }
          throw err;
        }
        created = true;
        await calls.unlink(temp.path);
      } else {
        // rename() replaces a link planted at the key; it never writes through it.
        created = !(await (existed ?? calls.isFile(path)));
        await calls.rename(temp.path, path);
      }
    } catch (err) {
      await calls.discard(temp.path);
      if (errnoOf(err) === "EISDIR" || errnoOf(err) === "EEXIST") {
        throw new StowageError("CONFLICT", `fs put: ${describeValue(key)} is a directory of other keys`, {
          cause: err,
        });
      }
      throw err;
    }
    if (journaled) await journaled.confirmIdentity(path, temp.identity!);
    return { size: temp.size, created, directory: location.lexicalDirectory };
  });
  if (!stored)
    throw new StowageError("UNAVAILABLE", `fs put: the directory of ${describeValue(key)} vanished`);
  if (fsync) await context.syncDirectory(stored.directory);
  return { key, size: stored.size, created: stored.created };
}
