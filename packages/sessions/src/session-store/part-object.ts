import { StowageError } from "@stowage/core";
import { encodeJsonLines } from "./json-lines.js";
import type { SessionSummaryEntry } from "./types.js";

/**
 * One part object of a transcript: `part-<first seq>-<last seq>.jsonl`, 12 digits each, so that key
 * order is sequence order. An append writes a single part (`first === last`) create-only: the
 * sequence number is the lock, and two writers never overwrite each other. Compaction writes a
 * range part that supersedes every part inside its range, then empties those parts (zero-byte
 * tombstones): their names stay taken, so a writer in another process whose view is older than
 * the compaction still meets ALREADY_EXISTS and re-reads, and never writes a sequence number a
 * range already holds.
 */
export const PART_NAME_PATTERN = /^part-(\d{12})-(\d{12})\.jsonl$/;
const SEQ_DIGITS = 12;
/** Highest sequence number a part name can carry. */
export const MAX_PART_SEQ = 10 ** SEQ_DIGITS - 1;

export interface PartRef {
  key: string;
  first: number;
  last: number;
  size: number;
  lastModifiedMs: number;
}

export const partName = (first: number, last: number) =>
  `part-${String(first).padStart(SEQ_DIGITS, "0")}-${String(last).padStart(SEQ_DIGITS, "0")}.jsonl`;
/** Every part name has this many characters (ASCII). */
export const PART_NAME_LENGTH = partName(1, 1).length;

/** The part named by the last segment of `key`, or undefined when it is not a part name. */
export function parsePartName(name: string): { first: number; last: number } | undefined {
  const match = PART_NAME_PATTERN.exec(name);
  if (!match) return undefined;
  const first = Number(match[1]);
  const last = Number(match[2]);
  return first >= 1 && last >= first ? { first, last } : undefined;
}

/**
 * A part's first line: how many entry lines each sequence number holds (so a reader can skip the
 * sequences an overlapping range already gave it) and, for a main transcript, the session summary
 * as of the part's last sequence.
 */
export interface PartHeader {
  stowageSessionPart: 1;
  counts: number[];
  summary?: SessionSummaryEntry;
}

/** A part's bytes: the header line, then one JSON line per entry, each ending in `\n`. */
export function encodePart(header: PartHeader, lines: readonly string[]): Uint8Array {
  return encodeJsonLines([JSON.stringify(header), ...lines]);
}

function corrupt(key: string, why: string): StowageError {
  return new StowageError("INTEGRITY", `session store part ${key} is not readable: ${why}`, {
    reason: "CORRUPT_PART",
  });
}

/** Parses a part's header line, checked against the part's name. */
export function parseHeader(key: string, line: string, span: number): PartHeader {
  let header: PartHeader;
  try {
    header = JSON.parse(line) as PartHeader;
  } catch (err) {
    throw corrupt(key, `its header is not JSON (${(err as Error).message})`);
  }
  if (
    header?.stowageSessionPart !== 1 ||
    !Array.isArray(header.counts) ||
    header.counts.length !== span ||
    !header.counts.every((count) => Number.isInteger(count) && count >= 0)
  ) {
    throw corrupt(key, "its header does not match its name");
  }
  return header;
}

const NEWLINE = 0x0a;

/**
 * Splits a part's bytes into its header and its entry lines, each turned into what `decodeLine`
 * makes of its JSON text (the text itself by default). Lines are decoded one by one, not as one
 * string split afterwards: one character outside ASCII makes a whole decoded part a two-byte
 * string, and every line sliced from it stays two bytes a character, which doubled what decoding
 * and parsing a part cost. A newline byte never sits inside a UTF-8 sequence, so the text is the same.
 */
export function decodePart<Line = string>(
  key: string,
  bytes: Uint8Array,
  span: number,
  decodeLine: (line: string) => Line = (line) => line as Line,
): { header: PartHeader; lines: Line[] } {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buffer.byteLength === 0 || buffer[buffer.byteLength - 1] !== NEWLINE)
    throw corrupt(key, "it does not end with a newline (a cut write?)");
  const headerEnd = buffer.indexOf(NEWLINE);
  const header = parseHeader(key, buffer.toString("utf8", 0, headerEnd), span);
  const lines: Line[] = [];
  for (let start = headerEnd + 1; start < buffer.byteLength; ) {
    const end = buffer.indexOf(NEWLINE, start);
    try {
      lines.push(decodeLine(buffer.toString("utf8", start, end)));
    } catch (err) {
      throw corrupt(key, `its entry line ${lines.length + 1} is not readable (${(err as Error).message})`);
    }
    start = end + 1;
  }
  const total = header.counts.reduce((sum, count) => sum + count, 0);
  if (total !== lines.length)
    throw corrupt(key, `its header counts ${total} entries, it holds ${lines.length}`);
  return { header, lines };
}
