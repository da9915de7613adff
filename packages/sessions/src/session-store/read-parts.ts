import { setTimeout as sleep } from "node:timers/promises";
import type { MovedPayload } from "@stowage/blob-store";
import { mapConcurrent, type ObjectStore, StowageError, throwIfAborted } from "@stowage/core";
import { decodePart, movedOf, type PartRef, parseHeader, parsePartName } from "./part-object.js";
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

/** Sequences `first..last` whose entries no part holds, and the key where that shows. */
interface LostEntries {
  key: string;
  first: number;
  last: number;
}

/**
 * Where a listing shows entries lost, or undefined: a zero-byte part that no non-empty part's
 * span covers (a compaction empties a part only once a range holds its entries), or sequence
 * numbers that no part holds between two that do (create-only appends skip none). Sequences
 * before the first part are not counted: that is what a delete racing a writer in another
 * process leaves (the writer's later parts, alone).
 */
function lostEntries(directory: string, parts: readonly PartRef[]): LostEntries | undefined {
  const live = parts.filter((part) => part.size > 0).sort((a, b) => a.first - b.first);
  const tombstones = parts.filter((part) => part.size === 0).sort((a, b) => a.first - b.first);
  // The furthest `last` of the live parts that start at or before the tombstone: it covers the
  // tombstone when it reaches the tombstone's last sequence.
  let reach = 0;
  let next = 0;
  for (const tombstone of tombstones) {
    while (next < live.length && live[next]!.first <= tombstone.first)
      reach = Math.max(reach, live[next++]!.last);
    if (reach < tombstone.last) return { key: tombstone.key, first: tombstone.first, last: tombstone.last };
  }
  const selected = selectParts(live);
  for (let i = 1; i < selected.length; i++) {
    const before = selected[i - 1]!.last;
    if (selected[i]!.first > before + 1)
      return { key: directory, first: before + 1, last: selected[i]!.first - 1 };
  }
  return undefined;
}

function missingPart(lost: LostEntries): StowageError {
  return new StowageError(
    "INTEGRITY",
    `session store ${lost.key}: the entries of sequences ${lost.first} to ${lost.last} are in no part (a part emptied or removed outside this store)`,
    { reason: "MISSING_PART", details: { ...lost } },
  );
}

/** What a listing saw, to tell a listing that stays from one that keeps changing. */
const listingShape = (parts: readonly PartRef[]) =>
  parts.map((part) => `${part.key} ${part.size}`).join("\n");

/**
 * The transcript's parts as one listing that loses no entry, or null when it has none. A listing
 * that raced a compaction (a page listed before the range was written, the next one after its
 * parts were emptied) or a delete is taken again, up to {@link READ_ATTEMPTS} times, waiting 1, 2,
 * 4 … 64 ms between them (only on this path). Entries still lost then are `INTEGRITY` /
 * `MISSING_PART` when the last two listings agree, never a transcript with a hole; `CONFLICT` /
 * `PARTS_CHANGING` when they differ (a delete of many parts still running: retry).
 */
async function listWholeTranscript(
  store: ObjectStore,
  directory: string,
  signal: AbortSignal | undefined,
): Promise<PartRef[] | null> {
  let previous: string | undefined;
  for (let attempt = 1; ; attempt++) {
    const parts = await listParts(store, directory, signal);
    if (parts.length === 0) return null;
    const lost = lostEntries(directory, parts);
    if (!lost) return parts;
    const shape = listingShape(parts);
    if (attempt >= READ_ATTEMPTS) throw shape === previous ? missingPart(lost) : partsChanging(directory);
    previous = shape;
    await sleep(2 ** (attempt - 1));
    throwIfAborted(signal, `session store read ${directory}`);
  }
}

function partsChanging(directory: string): StowageError {
  return new StowageError(
    "CONFLICT",
    `session store ${directory}: parts kept changing during ${READ_ATTEMPTS} reads; retry`,
    { reason: "PARTS_CHANGING" },
  );
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
  /** Payloads moved out of entries, by the index of the entry in `lines`. */
  moved: Map<number, readonly MovedPayload[]>;
  /** The bytes of the payloads the parts read hold (format 4), checked, by SHA-256. */
  held: Map<string, Uint8Array>;
}

/**
 * Reads a transcript's parts after sequence `afterSeq` (0: all of it), or null when it has no
 * part. Starts over when a part it listed is gone (a concurrent compaction), bounded.
 * `decodeLine` turns each entry line into what the caller keeps (a load parses them) and throws
 * when the line is not a stored entry; it runs as each part arrives, so that decoding overlaps
 * the GETs still in flight. Every fault of what is stored is `INTEGRITY` (see `decodePart`).
 */
export async function readTranscript<Line>(
  store: ObjectStore,
  directory: string,
  afterSeq: number,
  signal: AbortSignal | undefined,
  decodeLine: (line: string) => Line,
): Promise<TranscriptRead<Line> | null> {
  for (let attempt = 1; ; attempt++) {
    const parts = await listWholeTranscript(store, directory, signal);
    if (parts === null) return null;
    // A zero-byte part is a tombstone: a compaction moved its entries into a range part.
    const selected = selectParts(parts.filter((part) => part.size > 0));
    const lastSeq = parts.reduce((highest, part) => Math.max(highest, part.last), 0);
    const wanted = selected.filter((part) => part.last > afterSeq);
    const decodedParts = await mapConcurrent(
      wanted,
      readConcurrency(wanted),
      async (part) => {
        const bytes = await store.get(part.key, { signal });
        if (bytes === null || bytes.byteLength === 0) return null;
        return decodePart(part.key, bytes, part.last - part.first + 1, decodeLine);
      },
      signal,
    );
    if (decodedParts.some((decoded) => decoded === null)) {
      if (attempt < READ_ATTEMPTS) continue;
      throw partsChanging(directory);
    }
    const lines: Line[] = [];
    const counts: number[] = [];
    const moved = new Map<number, readonly MovedPayload[]>();
    const held = new Map<string, Uint8Array>();
    let covered = afterSeq;
    let summary: SessionSummaryEntry | undefined;
    const firstSeq = Math.max(afterSeq + 1, wanted[0]?.first ?? afterSeq + 1);
    for (const [index, part] of wanted.entries()) {
      const decoded = decodedParts[index]!;
      const partMoved = movedOf(decoded.header);
      for (const [sha256, bytes] of decoded.held) held.set(sha256, bytes);
      let line = 0;
      for (let seq = part.first; seq <= part.last; seq++) {
        const count = decoded.header.counts[seq - part.first]!;
        if (seq > covered) {
          for (let i = 0; i < count; i++) {
            const payloads = partMoved.get(line + i);
            if (payloads) moved.set(lines.length, payloads);
            lines.push(decoded.lines[line + i]!);
          }
          counts.push(count);
        }
        line += count;
      }
      covered = Math.max(covered, part.last);
      summary = decoded.header.summary;
    }
    return { lines, counts, firstSeq, lastSeq, summary, parts, moved, held };
  }
}

/**
 * The summary in the header of a transcript's last part, reading only that part's first line;
 * undefined when it has none. The listing is checked as a load checks it.
 */
export async function readSummary(
  store: ObjectStore,
  directory: string,
  signal: AbortSignal | undefined,
): Promise<SessionSummaryEntry | undefined> {
  for (let attempt = 1; attempt <= READ_ATTEMPTS; attempt++) {
    const parts = await listWholeTranscript(store, directory, signal);
    const last = selectParts((parts ?? []).filter((part) => part.size > 0)).at(-1);
    if (!last) return undefined;
    const head = await readFirstLine(store, last.key, signal);
    if (head === null) continue; // compacted meanwhile
    return parseHeader(last.key, head, last.last - last.first + 1).summary;
  }
  throw partsChanging(directory);
}

/** The first line of an object without reading the rest of it; null when it is gone or empty. */
async function readFirstLine(
  store: ObjectStore,
  key: string,
  signal: AbortSignal | undefined,
): Promise<string | null> {
  const stream = await store.stream(key, { signal });
  if (stream === null) return null;
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      const newline = text.indexOf("\n");
      if (newline >= 0) return text.slice(0, newline);
    }
    return text.length > 0 ? text : null;
  } finally {
    await reader.cancel().catch(() => {});
  }
}
