import { largest, mapConcurrent, type ObjectStore, StowageError } from "@stowage/core";
import { decodePart, type PartRef, parsePartName } from "./part-object.js";
import type { SessionSummaryEntry } from "./types.js";

/** Part objects fetched at once by a load (S3 round trips overlap; the SDK's reference uses 16). */
export const READ_CONCURRENCY = 16;
/**
 * Bytes of parts a load fetches at once, about: small parts go 16 at a time, large ones (compacted
 * ranges, batches of hundreds of entries) fewer, so that a load's memory in flight stays bounded.
 * Measured on RGW with 1 MB parts, 4 at a time loaded 50,000 entries in 655 ms, 16 at a time in
 * 1,055 ms: past a few, parallel GETs of large parts only compete with decoding for the CPU.
 */
const READ_BYTES_IN_FLIGHT = 4 * 1024 * 1024;

/** How many of these parts to fetch at once: {@link READ_BYTES_IN_FLIGHT} over their mean size. */
function readConcurrency(parts: readonly PartRef[]): number {
  const meanSize = parts.reduce((sum, part) => sum + part.size, 0) / Math.max(1, parts.length);
  return Math.max(1, Math.min(READ_CONCURRENCY, Math.floor(READ_BYTES_IN_FLIGHT / Math.max(1, meanSize))));
}
/**
 * Times a read starts over when the parts changed under it (a compaction tombstoned a part it
 * listed; a listing caught a compaction half done). Each retry sees a newer state.
 */
const READ_ATTEMPTS = 8;

/** Every part directly under `directory` (a transcript's own parts, not its subpaths'), in key order. */
export async function listParts(
  store: ObjectStore,
  directory: string,
  signal?: AbortSignal,
): Promise<PartRef[]> {
  const parts: PartRef[] = [];
  const prefix = `${directory}part-`;
  for await (const item of store.iterate({ prefix, signal })) {
    const name = item.key.slice(directory.length);
    const span = parsePartName(name);
    if (span)
      parts.push({ key: item.key, ...span, size: item.size, lastModifiedMs: item.lastModified.getTime() });
  }
  return parts;
}

/**
 * The parts to read, in sequence order: a wider range first where two start together, and
 * anything inside a range already taken left out (a compaction's leftovers). A range that
 * overlaps the one before it only partly is taken too: its header's counts say which of its
 * lines to skip.
 */
export function selectParts(parts: readonly PartRef[]): PartRef[] {
  const sorted = [...parts].sort((a, b) => a.first - b.first || b.last - a.last);
  const selected: PartRef[] = [];
  let covered = 0;
  for (const part of sorted) {
    if (part.last <= covered) continue;
    selected.push(part);
    covered = part.last;
  }
  return selected;
}

/** True when the selected parts leave a sequence number out between their first and last. */
function hasGap(selected: readonly PartRef[]): boolean {
  for (let i = 1; i < selected.length; i++) if (selected[i]!.first > selected[i - 1]!.last + 1) return true;
  return false;
}

export interface TranscriptRead<Line = string> {
  /** Entry lines of every sequence after `afterSeq`, in order: JSON text, or what `decodeLine` made of it. */
  lines: Line[];
  /** Lines per sequence number, from `firstSeq`. */
  counts: number[];
  firstSeq: number;
  /** The highest sequence number stored: the next append takes `lastSeq + 1`. */
  lastSeq: number;
  /** The summary stored with the last part (main transcripts). */
  summary: SessionSummaryEntry | undefined;
  /** The parts read or superseded, for a compaction to delete. */
  parts: PartRef[];
}

/**
 * Reads a transcript's parts after sequence `afterSeq` (0: all of it), or null when it has no
 * part. Starts over when a part it listed is gone (a concurrent compaction), bounded.
 * `decodeLine` turns each entry line into what the caller keeps (a load parses them); it runs as
 * each part arrives, so that decoding overlaps the GETs still in flight.
 */
export async function readTranscript(
  store: ObjectStore,
  directory: string,
  afterSeq: number,
  signal?: AbortSignal,
): Promise<TranscriptRead | null>;
export async function readTranscript<Line>(
  store: ObjectStore,
  directory: string,
  afterSeq: number,
  signal: AbortSignal | undefined,
  decodeLine: (line: string) => Line,
): Promise<TranscriptRead<Line> | null>;
export async function readTranscript<Line>(
  store: ObjectStore,
  directory: string,
  afterSeq: number,
  signal?: AbortSignal,
  decodeLine?: (line: string) => Line,
): Promise<TranscriptRead<Line | string> | null> {
  for (let attempt = 1; ; attempt++) {
    const parts = await listParts(store, directory, signal);
    if (parts.length === 0) return null;
    // A zero-byte part is a tombstone: a compaction moved its entries into a range part.
    const selected = selectParts(parts.filter((part) => part.size > 0));
    if (selected.length === 0) {
      if (attempt < READ_ATTEMPTS) continue;
      return null;
    }
    const lastSeq = largest(
      parts.map((part) => part.last),
      0,
    );
    // A gap is a listing that raced a compaction; a gap that stays is a part lost for good
    // (a delete racing a writer in another process), and what is left is read.
    if (hasGap(selected) && attempt < READ_ATTEMPTS) continue;
    const wanted = selected.filter((part) => part.last > afterSeq);
    const decodedParts = await mapConcurrent(
      wanted,
      readConcurrency(wanted),
      async (part) => {
        const bytes = await store.get(part.key, { signal });
        if (bytes === null || bytes.byteLength === 0) return null;
        return decodePart<Line | string>(part.key, bytes, part.last - part.first + 1, decodeLine);
      },
      signal,
    );
    if (decodedParts.some((decoded) => decoded === null)) {
      if (attempt < READ_ATTEMPTS) continue;
      throw new StowageError(
        "CONFLICT",
        `session store ${directory}: parts kept changing during ${READ_ATTEMPTS} reads; retry`,
        { reason: "PARTS_CHANGING" },
      );
    }
    const lines: (Line | string)[] = [];
    const counts: number[] = [];
    let covered = afterSeq;
    let summary: SessionSummaryEntry | undefined;
    const firstSeq = Math.max(afterSeq + 1, wanted[0]?.first ?? afterSeq + 1);
    for (const [index, part] of wanted.entries()) {
      const decoded = decodedParts[index]!;
      // Sequences no part holds (a gap that stayed) count as empty, so counts[i] is seq firstSeq + i.
      for (let seq = Math.max(covered + 1, firstSeq); seq < part.first; seq++) counts.push(0);
      let line = 0;
      for (let seq = part.first; seq <= part.last; seq++) {
        const count = decoded.header.counts[seq - part.first]!;
        if (seq > covered) {
          for (let i = 0; i < count; i++) lines.push(decoded.lines[line + i]!);
          counts.push(count);
        }
        line += count;
      }
      covered = Math.max(covered, part.last);
      summary = decoded.header.summary;
    }
    return { lines, counts, firstSeq, lastSeq, summary, parts };
  }
}
