/**
 * Content-defined chunks at line boundaries. A transcript grows by lines appended at its end, so
 * a chunk is cut only after a line, and whether it is cut there depends on that line's own bytes
 * and the chunk's size so far, never on what comes later: appending lines leaves every earlier
 * cut where it was, and the chunks before the last are the same bytes, stored once. A line changed
 * in the middle moves the cuts only until the next line that cuts.
 */

/** No cut before a chunk holds this many bytes: bounds how many chunks a file of short lines makes. */
const MIN_CHUNK_BYTES = 16 * 1024;
/** The size chunks come out at on average: one line cuts with a chance of its length in 48 KiB. */
const TARGET_CHUNK_BYTES = 64 * 1024;
/** A chunk this large is cut after its line whatever the line says. */
const MAX_CHUNK_BYTES = 256 * 1024;
/** Bytes of a line's start and of its end that decide a cut: its ids and timestamps. */
const SAMPLE_BYTES = 32;
/** A line of `n` bytes cuts when its hash is below `n * CUT_SCALE` (of 2^32). */
const CUT_SCALE = 2 ** 32 / (TARGET_CHUNK_BYTES - MIN_CHUNK_BYTES);
const NEWLINE = 0x0a;

/** FNV-1a over the line's first and last bytes and its length, then mixed (MurmurHash3's finalizer). */
function lineHash(bytes: Uint8Array, start: number, end: number): number {
  let hash = 0x811c9dc5 ^ (end - start);
  const headEnd = Math.min(end, start + SAMPLE_BYTES);
  for (let i = start; i < headEnd; i++) hash = Math.imul(hash ^ bytes[i]!, 0x01000193);
  for (let i = Math.max(headEnd, end - SAMPLE_BYTES); i < end; i++) {
    hash = Math.imul(hash ^ bytes[i]!, 0x01000193);
  }
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return hash >>> 0;
}

/**
 * Where each chunk of `bytes` ends (exclusive offsets, the last one `bytes.byteLength`; none for
 * an empty file). Lines are cut after their `\n`; a last line without one ends the last chunk.
 * A line longer than the largest chunk is a chunk of its own, never split.
 */
export function lineChunkEnds(bytes: Uint8Array): number[] {
  const ends: number[] = [];
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let chunkStart = 0;
  let lineStart = 0;
  while (lineStart < text.byteLength) {
    const newline = text.indexOf(NEWLINE, lineStart);
    if (newline === -1) break;
    const lineEnd = newline + 1;
    const size = lineEnd - chunkStart;
    if (
      lineEnd < text.byteLength &&
      size >= MIN_CHUNK_BYTES &&
      (size >= MAX_CHUNK_BYTES || lineHash(text, lineStart, lineEnd) < (lineEnd - lineStart) * CUT_SCALE)
    ) {
      ends.push(lineEnd);
      chunkStart = lineEnd;
    }
    lineStart = lineEnd;
  }
  if (chunkStart < text.byteLength) ends.push(text.byteLength);
  return ends;
}
