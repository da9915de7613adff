import type { Dirent } from "node:fs";
import { type FileHandle, open, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { createGunzip } from "node:zlib";
import { describeValue, errnoOf, fromSystemError, StowageError, throwIfAborted } from "@stowage/core";
import { scanBytesForBlobRefs } from "./ref-scanner.js";

/** Options of {@link scanFilesForBlobRefs}. */
export interface ScanFilesOptions {
  /** Which files under a directory are scanned, by name; default every regular file. Files named directly are always scanned. */
  include?: (name: string) => boolean;
  /** A path that does not exist yields nothing instead of failing with NOT_FOUND. Default false. */
  allowMissing?: boolean;
  signal?: AbortSignal;
}

async function isGzip(handle: FileHandle): Promise<boolean> {
  const magic = new Uint8Array(2);
  const { bytesRead } = await handle.read(magic, 0, 2, 0);
  return bytesRead === 2 && magic[0] === 0x1f && magic[1] === 0x8b;
}

/**
 * Every blob hash referenced in one file, gzipped or not (told by its magic bytes, not its name).
 * With `vanishOk`, a file removed or renamed since its directory was listed yields nothing: its
 * content went with it, and the collection's second look at the roots finds its new name.
 */
async function* refsInFile(path: string, vanishOk: boolean, signal?: AbortSignal): AsyncGenerator<string> {
  let handle: FileHandle;
  try {
    handle = await open(path, "r");
  } catch (err) {
    if (vanishOk && errnoOf(err) === "ENOENT") return;
    throw err;
  }
  const gzipped = await isGzip(handle).catch(async (err: unknown) => {
    await handle.close();
    throw err;
  });
  const raw = handle.createReadStream({ start: 0 });
  let source: NodeJS.ReadableStream & { destroy(): void } = raw;
  if (gzipped) {
    const gunzip = createGunzip();
    // pipe() does not forward errors: a failing read would otherwise leave the scan waiting forever.
    raw.on("error", (err) => gunzip.destroy(err));
    source = raw.pipe(gunzip);
  }
  try {
    yield* scanBytesForBlobRefs(source as AsyncIterable<Uint8Array>, signal ? { signal } : {});
  } finally {
    raw.destroy();
    if (source !== raw) source.destroy();
  }
}

/**
 * The files under `directory`, depth first. A symbolic link is followed when it points at a
 * regular file (reading it can only keep more blobs); a link to a directory is refused, since
 * following it could loop and skipping it could miss refs.
 */
async function* filesUnder(
  directory: string,
  include: (name: string) => boolean,
  nested: boolean,
  signal?: AbortSignal,
): AsyncGenerator<string> {
  throwIfAborted(signal, "scan files for blob refs");
  let entries: Dirent[];
  try {
    entries = await readdir(directory, { withFileTypes: true });
  } catch (err) {
    // A subdirectory moved away since its parent was listed (a session being moved): like a file.
    if (nested && errnoOf(err) === "ENOENT") return;
    throw err;
  }
  for (const entry of entries) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) {
      yield* filesUnder(path, include, true, signal);
    } else if (entry.isFile()) {
      if (include(entry.name)) yield path;
    } else if (entry.isSymbolicLink()) {
      const target = await stat(path).catch((err: unknown) => {
        if (errnoOf(err) === "ENOENT") return undefined; // dangling: there is nothing to read
        throw err;
      });
      if (target?.isDirectory()) {
        throw new StowageError(
          "UNAVAILABLE",
          `${path} is a symbolic link to a directory; the ref scan does not follow it, so the roots would be incomplete`,
          { reason: "ROOTS_UNREADABLE", details: { path } },
        );
      }
      if (target?.isFile() && include(entry.name)) yield path;
    }
  }
}

/**
 * Yields the hash of every `blob:sha256:` ref in files: each path is a file (scanned whatever its
 * name) or a directory (searched recursively; `include` picks files by name). Gzipped files are
 * told by their magic bytes and decompressed. A path that does not exist fails with NOT_FOUND
 * (unless `allowMissing`), and any read error is thrown: garbage collection must never run on a
 * partial root set. Session files, artifacts, agent outputs, thread logs and posted items are all
 * text, so one scan of their directories finds every ref they hold.
 */
export async function* scanFilesForBlobRefs(
  paths: string | readonly string[],
  options: ScanFilesOptions = {},
): AsyncGenerator<string> {
  const list = typeof paths === "string" ? [paths] : paths;
  const include = options.include ?? (() => true);
  if (typeof include !== "function") {
    throw new StowageError("INVALID_INPUT", `include must be a function, got ${describeValue(include)}`);
  }
  for (const path of list) {
    if (typeof path !== "string" || path.length === 0 || path.includes("\u0000")) {
      throw new StowageError(
        "INVALID_INPUT",
        `a scanned path must be a non-empty string without NUL, got ${describeValue(path)}`,
      );
    }
  }
  for (const path of list) {
    try {
      let info: Awaited<ReturnType<typeof stat>>;
      try {
        info = await stat(path);
      } catch (err) {
        if (options.allowMissing === true && errnoOf(err) === "ENOENT") continue;
        throw err;
      }
      if (info.isDirectory()) {
        for await (const file of filesUnder(path, include, false, options.signal)) {
          yield* refsInFile(file, true, options.signal);
        }
      } else {
        yield* refsInFile(path, false, options.signal);
      }
    } catch (err) {
      throw fromSystemError(err, `scan ${describeValue(path)} for blob refs`);
    }
  }
}
