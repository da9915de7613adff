import { StowageError } from "@stowage/core";
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

/** A part's text: the header line, then one JSON line per entry, each ending in `\n`. */
export function encodePart(header: PartHeader, lines: readonly string[]): string {
  const head = JSON.stringify(header);
  return lines.length === 0 ? `${head}\n` : `${head}\n${lines.join("\n")}\n`;
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

/** Splits a part's text into its header and its entry lines (kept as JSON text). */
export function decodePart(key: string, text: string, span: number): { header: PartHeader; lines: string[] } {
  const lines = text.split("\n");
  if (lines.at(-1) !== "") throw corrupt(key, "it does not end with a newline (a cut write?)");
  lines.pop();
  const header = parseHeader(key, lines.shift() ?? "", span);
  const total = header.counts.reduce((sum, count) => sum + count, 0);
  if (total !== lines.length)
    throw corrupt(key, `its header counts ${total} entries, it holds ${lines.length}`);
  return { header, lines };
}
