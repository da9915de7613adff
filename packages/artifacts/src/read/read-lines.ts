import type { FileHandle } from "node:fs/promises";
import { concatBytes, fromSystemError, StowageError, throwIfAborted } from "@stowage/core";
import type { LineRange, PageRequest } from "./read-options.js";

/** Bytes read per system call while paging through a file by lines; one buffer is reused. */
export const LINE_SCAN_CHUNK_BYTES = 1024 * 1024;

const NEWLINE = 0x0a;

export interface LinePage {
  bytes: Uint8Array;
  lines: LineRange;
}

function tooLarge(what: string, maxBytes: number, page: PageRequest): StowageError {
  return new StowageError(
    "TOO_LARGE",
    `${what}: lines from ${page.offset} (limit ${page.limit}) hold more than ${maxBytes} bytes; ask for fewer lines or a larger maxBytes`,
    { reason: "READ_TOO_LARGE", details: { maxBytes, limit: maxBytes } },
  );
}

/**
 * Reads lines `offset … offset + limit - 1` (1-based; a line ends at `\n`, which is kept) by
 * scanning the file from its start in {@link LINE_SCAN_CHUNK_BYTES} pieces: memory holds one
 * piece plus the lines returned, whatever the file size, and the scan stops at the last line
 * asked for. An offset past the last line is INVALID_INPUT (reason `OFFSET_PAST_END`), except
 * offset 1 of an empty file, which is an empty page.
 */
export async function readLines(
  handle: FileHandle,
  page: PageRequest,
  maxBytes: number,
  what: string,
  signal?: AbortSignal,
): Promise<LinePage> {
  const buffer = Buffer.allocUnsafe(LINE_SCAN_CHUNK_BYTES);
  const parts: Uint8Array[] = [];
  let partsBytes = 0;
  let position = 0;
  let newlinesBefore = 0; // newlines skipped before the page starts
  let collecting = page.offset === 1;
  let complete = 0; // lines of the page that ended with a newline
  let endPosition = -1; // file position just past the page, when the limit was reached
  let bytesAfterPage = false; // the last read already showed bytes after the page
  let lastByte = -1;
  try {
    for (;;) {
      throwIfAborted(signal, `read ${what}`);
      const { bytesRead } = await handle.read(buffer, 0, buffer.byteLength, position);
      if (bytesRead === 0) break;
      const view = buffer.subarray(0, bytesRead);
      lastByte = view[bytesRead - 1]!;
      let cursor = 0;
      if (!collecting) {
        while (newlinesBefore < page.offset - 1) {
          const newline = view.indexOf(NEWLINE, cursor);
          if (newline === -1) {
            cursor = bytesRead;
            break;
          }
          newlinesBefore++;
          cursor = newline + 1;
        }
        collecting = newlinesBefore === page.offset - 1;
      }
      if (collecting) {
        const start = cursor;
        while (complete < page.limit) {
          const newline = view.indexOf(NEWLINE, cursor);
          if (newline === -1) {
            cursor = bytesRead;
            break;
          }
          complete++;
          cursor = newline + 1;
        }
        if (cursor > start) {
          partsBytes += cursor - start;
          if (partsBytes > maxBytes) throw tooLarge(what, maxBytes, page);
          parts.push(new Uint8Array(view.subarray(start, cursor)));
        }
        if (complete === page.limit) {
          endPosition = position + cursor;
          bytesAfterPage = cursor < bytesRead;
          break;
        }
      }
      position += bytesRead;
    }
    const atEnd = endPosition === -1;
    // A last line without a trailing newline still counts as a line.
    const partial = atEnd && partsBytes > 0 && parts[parts.length - 1]!.at(-1) !== NEWLINE ? 1 : 0;
    const returned = complete + partial;
    if (returned === 0 && page.offset > 1) {
      const totalLines = newlinesBefore + (lastByte !== -1 && lastByte !== NEWLINE ? 1 : 0);
      throw new StowageError(
        "INVALID_INPUT",
        `${what}: offset ${page.offset} is past the end (it has ${totalLines} line${totalLines === 1 ? "" : "s"})`,
        { reason: "OFFSET_PAST_END", details: { offset: page.offset, totalLines } },
      );
    }
    const hasMore = !atEnd && (bytesAfterPage || endPosition < (await handle.stat()).size);
    const lines: LineRange = { first: page.offset, last: page.offset + returned - 1, hasMore };
    if (atEnd) lines.totalLines = page.offset - 1 + returned;
    return { bytes: concatBytes(parts, partsBytes), lines };
  } catch (err) {
    throw fromSystemError(err, `read ${what}`);
  }
}

/**
 * Reads a whole file, failing with TOO_LARGE (reason `READ_TOO_LARGE`) past `maxBytes`.
 * `sizeHint` is the size the caller saw when it opened the file (saving a stat); without it the
 * file is stat'ed here.
 */
export async function readWhole(
  handle: FileHandle,
  maxBytes: number,
  what: string,
  signal?: AbortSignal,
  sizeHint?: number,
): Promise<Uint8Array> {
  const tooBig = (size: number) =>
    new StowageError(
      "TOO_LARGE",
      `${what} is ${size} bytes, more than the ${maxBytes} a read returns; read it by lines with offset and limit`,
      { reason: "READ_TOO_LARGE", details: { size, maxBytes, limit: maxBytes } },
    );
  try {
    const size = sizeHint ?? (await handle.stat()).size;
    if (size > maxBytes) throw tooBig(size);
    const parts: Uint8Array[] = [];
    let total = 0;
    // The size is a hint: a file still being written keeps growing, so read on past it. A chunk one
    // byte longer than what is left lets a short read past the hinted size end the read without a
    // last read of nothing (a short read before that size, as some network and FUSE file systems
    // give, reads on).
    for (;;) {
      throwIfAborted(signal, `read ${what}`);
      const chunk = new Uint8Array(Math.min(Math.max(size - total + 1, 64 * 1024), LINE_SCAN_CHUNK_BYTES));
      const { bytesRead } = await handle.read(chunk, 0, chunk.byteLength, total);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > maxBytes) throw tooBig(total);
      parts.push(bytesRead === chunk.byteLength ? chunk : chunk.subarray(0, bytesRead));
      if (bytesRead < chunk.byteLength && total >= size) break;
    }
    return concatBytes(parts, total);
  } catch (err) {
    throw fromSystemError(err, `read ${what}`);
  }
}
