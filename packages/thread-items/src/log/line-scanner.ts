import { Buffer } from "node:buffer";
import { type FileHandle, open } from "node:fs/promises";
import { errnoOf, fromSystemError, throwIfAborted } from "@stowage/core";

/** Bytes read from a log file per system call while scanning it. */
const LOG_READ_CHUNK_BYTES = 1024 * 1024;

export interface ScannedLine {
  /** 1-based line number in the file. */
  number: number;
  bytes: Buffer;
  /** False for a last line without its newline: a write cut short by a crash. */
  complete: boolean;
}

export interface ScanOptions {
  signal?: AbortSignal;
  /**
   * Decides from the first `prefix.length` bytes whether a line is wanted; lines that are not are
   * skipped without being kept in memory. Default: every line.
   */
  prefix?: Uint8Array;
  /** Bytes per read; default {@link LOG_READ_CHUNK_BYTES} (tests use tiny chunks to hit every boundary). */
  chunkBytes?: number;
}

function startsWith(parts: readonly Buffer[], prefix: Uint8Array): boolean {
  let offset = 0;
  for (const part of parts) {
    const length = Math.min(part.length, prefix.length - offset);
    if (Buffer.compare(part.subarray(0, length), prefix.subarray(offset, offset + length)) !== 0)
      return false;
    offset += length;
    if (offset === prefix.length) return true;
  }
  return offset === prefix.length;
}

/**
 * Yields the non-empty lines of the file at `path` (nothing when it does not exist), reading it in
 * chunks so that a line of any size, and a file of any size, costs memory only for wanted lines.
 */
export async function* scanLines(path: string, options: ScanOptions = {}): AsyncGenerator<ScannedLine> {
  const { signal, prefix, chunkBytes = LOG_READ_CHUNK_BYTES } = options;
  let handle: FileHandle;
  try {
    handle = await open(path, "r");
  } catch (err) {
    if (errnoOf(err) === "ENOENT") return;
    throw fromSystemError(err, `read thread log ${path}`);
  }
  try {
    const buffer = Buffer.allocUnsafe(chunkBytes);
    let parts: Buffer[] = [];
    let kept = 0;
    let wanted: boolean | undefined;
    let number = 1;
    const decide = () => {
      if (wanted === undefined && (!prefix || kept >= prefix.length)) {
        wanted = !prefix || startsWith(parts, prefix);
        if (!wanted) parts = [];
      }
    };
    for (;;) {
      throwIfAborted(signal, `read thread log ${path}`);
      let bytesRead: number;
      try {
        ({ bytesRead } = await handle.read(buffer, 0, buffer.length, null));
      } catch (err) {
        throw fromSystemError(err, `read thread log ${path}`);
      }
      if (bytesRead === 0) break;
      const chunk = buffer.subarray(0, bytesRead);
      let start = 0;
      while (start < chunk.length) {
        const newline = chunk.indexOf(10, start);
        const end = newline === -1 ? chunk.length : newline;
        if (wanted !== false && end > start) {
          // Copied: the read buffer is reused for the next chunk.
          parts.push(Buffer.from(chunk.subarray(start, end)));
          kept += end - start;
          decide();
        }
        if (newline === -1) break;
        if (kept > 0) {
          if (wanted === undefined) wanted = !prefix;
          if (wanted) yield { number, bytes: Buffer.concat(parts, kept), complete: true };
        }
        number++;
        parts = [];
        kept = 0;
        wanted = undefined;
        start = newline + 1;
      }
    }
    if (kept > 0) {
      if (wanted === undefined) wanted = !prefix;
      if (wanted) yield { number, bytes: Buffer.concat(parts, kept), complete: false };
    }
  } finally {
    await handle.close().catch(() => {});
  }
}
