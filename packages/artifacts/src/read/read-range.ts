import type { FileHandle } from "node:fs/promises";
import { fromSystemError, StowageError, throwIfAborted } from "@stowage/core";
import type { ByteRange } from "./read-options.js";

/**
 * Reads bytes `start …` of an open file, as they are on disk: at most `maxBytes`, and never past
 * `size`, the size seen when the file was opened, so that a file still being written gives one
 * consistent answer (`start + bytes.byteLength <= size`); read again from where it ended for what
 * was written since. Fewer bytes at the end of the file; `start === size` is empty; a start past
 * `size` is INVALID_INPUT (reason `OFFSET_PAST_END`). Only the bytes asked for are read, whatever
 * the position: a scan of a file by ranges reads it once.
 */
export async function readByteRange(
  handle: FileHandle,
  size: number,
  range: ByteRange,
  what: string,
  signal?: AbortSignal,
): Promise<Uint8Array> {
  throwIfAborted(signal, `read ${what}`);
  if (range.start > size) {
    throw new StowageError(
      "INVALID_INPUT",
      `${what}: start ${range.start} is past the end (it has ${size} byte${size === 1 ? "" : "s"})`,
      { reason: "OFFSET_PAST_END", details: { start: range.start, size } },
    );
  }
  const length = Math.min(range.maxBytes, size - range.start);
  const bytes = new Uint8Array(length);
  let filled = 0;
  try {
    // One read usually fills it; some network and FUSE file systems return less, so read on.
    while (filled < length) {
      throwIfAborted(signal, `read ${what}`);
      const { bytesRead } = await handle.read(bytes, filled, length - filled, range.start + filled);
      if (bytesRead === 0) break; // cut shorter since it was opened
      filled += bytesRead;
    }
  } catch (err) {
    throw fromSystemError(err, `read ${what}`);
  }
  return filled === length ? bytes : bytes.subarray(0, filled);
}
