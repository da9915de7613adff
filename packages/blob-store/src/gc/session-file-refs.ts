import { createReadStream } from "node:fs";
import { open, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { createGunzip } from "node:zlib";
import { describeValue, fromSystemError, StowageError, throwIfAborted } from "@stowage/core";
import { BLOB_REF_PREFIX } from "../blob-ref.js";

/** File names scanned when a directory is given: session JSONL, plain or gzipped. */
export const SESSION_FILE_PATTERN = /\.jsonl(\.gz)?$/;

const REF_PATTERN = /blob:sha256:([a-f0-9]{64})/g;
// One character short of a whole ref: enough to catch a ref cut by a chunk boundary, too short
// to hold a whole ref that was already reported.
const CARRY_CHARS = BLOB_REF_PREFIX.length + 64 - 1;

async function isGzip(path: string): Promise<boolean> {
  const handle = await open(path, "r");
  try {
    const magic = new Uint8Array(2);
    const { bytesRead } = await handle.read(magic, 0, 2, 0);
    return bytesRead === 2 && magic[0] === 0x1f && magic[1] === 0x8b;
  } finally {
    await handle.close();
  }
}

/** Every blob hash referenced in one file, gzipped or not (told by its magic bytes, not its name). */
async function* refsInFile(path: string, signal?: AbortSignal): AsyncGenerator<string> {
  const raw = createReadStream(path);
  let source: NodeJS.ReadableStream & { destroy(): void } = raw;
  if (await isGzip(path)) {
    const gunzip = createGunzip();
    // pipe() does not forward errors: a failing read would otherwise leave the scan waiting forever.
    raw.on("error", (err) => gunzip.destroy(err));
    source = raw.pipe(gunzip);
  }
  let carry = "";
  try {
    for await (const chunk of source as AsyncIterable<Buffer>) {
      throwIfAborted(signal, "scan session files");
      // latin1 maps each byte to one character: refs are ASCII, and no byte sequence can fail.
      const text = carry + chunk.toString("latin1");
      for (const match of text.matchAll(REF_PATTERN)) yield match[1]!;
      carry = text.slice(-CARRY_CHARS);
    }
  } finally {
    raw.destroy();
    if (source !== raw) source.destroy();
  }
}

async function* sessionFilesUnder(directory: string, signal?: AbortSignal): AsyncGenerator<string> {
  throwIfAborted(signal, "scan session files");
  const entries = await readdir(directory, { withFileTypes: true });
  for (const entry of entries) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) yield* sessionFilesUnder(path, signal);
    else if (entry.isFile() && SESSION_FILE_PATTERN.test(entry.name)) yield path;
  }
}

/**
 * Yields the hash of every `blob:sha256:` ref in session files: each path is a file (scanned
 * whatever its name) or a directory (searched recursively for `*.jsonl` and `*.jsonl.gz`). A path
 * that does not exist fails with NOT_FOUND: garbage collection must never run on a partial root set.
 */
export async function* scanSessionFilesForBlobRefs(
  paths: string | readonly string[],
  options: { signal?: AbortSignal } = {},
): AsyncGenerator<string> {
  const list = typeof paths === "string" ? [paths] : paths;
  for (const path of list) {
    if (typeof path !== "string" || path.length === 0) {
      throw new StowageError(
        "INVALID_INPUT",
        `session file path must be a non-empty string, got ${describeValue(path)}`,
      );
    }
    try {
      const info = await stat(path);
      if (info.isDirectory()) {
        for await (const file of sessionFilesUnder(path, options.signal))
          yield* refsInFile(file, options.signal);
      } else {
        yield* refsInFile(path, options.signal);
      }
    } catch (err) {
      throw fromSystemError(err, `scan session files ${describeValue(path)}`);
    }
  }
}
