import { type MovedPayload, parseMovedPayloads } from "@stowage/blob-store";
import { StowageError, sha256Hex } from "@stowage/core";
import { encodeJsonLines } from "./json-lines.js";
import { isStoredSummary } from "./session-store-key.js";
import type { SessionSummaryEntry } from "./types.js";

/**
 * One part object of a transcript: `part-<first seq>-<last seq>.jsonl`, 12 digits each, so that key
 * order is sequence order. An append writes a single part (`first === last`) create-only: the
 * sequence number is the lock, and two writers never overwrite each other. Compaction writes a
 * range part that supersedes every part inside its range, then empties those parts (zero-byte
 * tombstones): their names stay taken, so a writer in another process whose view is older than
 * the compaction still meets ALREADY_EXISTS and re-reads, and never writes a sequence number a
 * range already holds. A zero-byte part that no range covers is never written, so a reader takes
 * it, like a sequence number no part holds between two that do, for entries lost.
 */
export { MAX_PART_SEQ, PART_NAME_LENGTH, PART_NAME_PATTERN, parsePartName, partName } from "./part-name.js";

export interface PartRef {
  key: string;
  first: number;
  last: number;
  size: number;
  lastModifiedMs: number;
}

/**
 * The part format this version writes when no payload of the part moved to a blob store; it reads
 * this one and {@link PART_FORMAT_WITH_MOVED} only.
 */
export const PART_FORMAT = 2;
/**
 * Format 2 plus `moved`: what of the part's entries moved to the blob store. A part that has some
 * is written in this format so that a version that cannot put them back refuses the part rather
 * than return refs where images were.
 */
export const PART_FORMAT_WITH_MOVED = 3;
/**
 * Format 3 plus `held`: the bytes of payloads its entries refer to, after its entry lines, so that
 * an append is one put however many images it brings (a blob store's put is a round trip or more
 * of its own, before the part's). A later part refers to a payload an earlier one holds.
 */
export const PART_FORMAT_WITH_HELD = 4;

/** A payload whose bytes a part holds after its entry lines, in the header's order. */
export interface HeldPayload {
  sha256: string;
  size: number;
}

/** Payload bytes by SHA-256. */
export type HeldBytes = ReadonlyMap<string, Uint8Array>;

/** Payloads moved out of a part's entries, by the index of the entry line in the part (from 0). */
export type MovedByLine = ReadonlyMap<number, readonly MovedPayload[]>;

/**
 * A part's first line: its format, the SHA-256 of its own object key (so that a part copied under
 * another key — another session, span, subpath or prefix — is refused), how many entry lines each
 * sequence number holds (so a reader can skip the sequences an overlapping range already gave it)
 * and, for a main transcript, the session summary as of the part's last sequence.
 */
export interface PartHeader {
  stowageSessionPart: typeof PART_FORMAT | typeof PART_FORMAT_WITH_MOVED | typeof PART_FORMAT_WITH_HELD;
  keySha256: string;
  counts: number[];
  summary?: SessionSummaryEntry;
  /** Format 3: the moved payloads of entry lines, by line index (from 0) as a decimal key. */
  moved?: Record<string, readonly MovedPayload[]>;
  /** Format 4: the payloads whose bytes follow the entry lines, in that order. */
  held?: HeldPayload[];
}

/** What a writer puts in a part's header; the format and the key binding are added here. */
export interface PartContent {
  counts: number[];
  summary?: SessionSummaryEntry | undefined;
  moved?: MovedByLine | undefined;
  /** Bytes of payloads `moved` names that the part holds itself (each named by one of its lines). */
  held?: HeldBytes | undefined;
}

/**
 * The payloads of `held` that `moved` names, or undefined when none is: a range made of parts
 * holds what its lines refer to, not what a skipped line of an overlapping part did.
 */
function heldNamedBy(moved: MovedByLine, held: HeldBytes): Map<string, Uint8Array> | undefined {
  const named = new Map<string, Uint8Array>();
  for (const list of moved.values()) {
    for (const { sha256 } of list) {
      const bytes = held.get(sha256);
      if (bytes) named.set(sha256, bytes);
    }
  }
  return named.size > 0 ? named : undefined;
}

/**
 * A part's bytes for the object `key`: the header line, then one JSON line per entry, each ending
 * in `\n`, then the bytes of the payloads it holds, one after another.
 */
export function encodePart(key: string, content: PartContent, lines: readonly string[]): Uint8Array {
  const moved = content.moved && content.moved.size > 0 ? content.moved : undefined;
  const held = moved && content.held ? heldNamedBy(moved, content.held) : undefined;
  const header: PartHeader = {
    stowageSessionPart: held ? PART_FORMAT_WITH_HELD : moved ? PART_FORMAT_WITH_MOVED : PART_FORMAT,
    keySha256: sha256Hex(key),
    counts: content.counts,
    ...(content.summary ? { summary: content.summary } : {}),
    ...(moved ? { moved: Object.fromEntries([...moved].map(([line, list]) => [String(line), list])) } : {}),
    ...(held ? { held: [...held].map(([sha256, bytes]) => ({ sha256, size: bytes.byteLength })) } : {}),
  };
  const text = encodeJsonLines([JSON.stringify(header), ...lines]);
  return held ? Buffer.concat([text, ...held.values()]) : text;
}

/** Why a stored part cannot be read: `INTEGRITY` with the part's key and the byte offset of the fault. */
function unreadable(
  reason: "CORRUPT_PART" | "FOREIGN_PART" | "UNSUPPORTED_PART_FORMAT",
  key: string,
  offset: number,
  why: string,
  cause?: unknown,
): StowageError {
  return new StowageError(
    "INTEGRITY",
    `session store part ${key} is not readable at byte ${offset}: ${why}`,
    {
      reason,
      details: { key, offset },
      ...(cause === undefined ? {} : { cause }),
    },
  );
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Parses a part's header line, checked against the part's key (its binding) and name (its span). */
export function parseHeader(key: string, line: string, span: number): PartHeader {
  let header: unknown;
  try {
    header = JSON.parse(line);
  } catch (err) {
    throw unreadable("CORRUPT_PART", key, 0, `its header is not JSON (${(err as Error).message})`, err);
  }
  if (!isObject(header) || typeof header.stowageSessionPart !== "number")
    throw unreadable("CORRUPT_PART", key, 0, "its header is not a part header");
  const format = header.stowageSessionPart;
  if (format !== PART_FORMAT && format !== PART_FORMAT_WITH_MOVED && format !== PART_FORMAT_WITH_HELD) {
    // Format 1 bound a part to nothing, so any object could claim it: refused, never guessed at.
    throw unreadable(
      "UNSUPPORTED_PART_FORMAT",
      key,
      0,
      `it is of format ${format}, this version reads formats ${PART_FORMAT} to ${PART_FORMAT_WITH_HELD} only (format 1, from before parts were bound to their key, is refused: delete the session and import it again)`,
    );
  }
  const { keySha256, counts, summary } = header;
  if (typeof keySha256 !== "string" || !SHA256_HEX.test(keySha256))
    throw unreadable("CORRUPT_PART", key, 0, "its header has no key digest");
  if (keySha256 !== sha256Hex(key))
    throw unreadable(
      "FOREIGN_PART",
      key,
      0,
      "it was written under another key (another session, span or prefix)",
    );
  if (
    !Array.isArray(counts) ||
    counts.length !== span ||
    !counts.every((count) => Number.isInteger(count) && count >= 0)
  ) {
    throw unreadable("CORRUPT_PART", key, 0, "its header's counts do not match its name");
  }
  if (summary !== undefined && !isStoredSummary(summary))
    throw unreadable("CORRUPT_PART", key, 0, "its header's summary is not a session summary");
  if ((format !== PART_FORMAT) !== (header.moved !== undefined))
    throw unreadable("CORRUPT_PART", key, 0, `its header's moved payloads do not match its format ${format}`);
  if ((format === PART_FORMAT_WITH_HELD) !== (header.held !== undefined))
    throw unreadable("CORRUPT_PART", key, 0, `its header's held payloads do not match its format ${format}`);
  if (header.moved !== undefined)
    checkMoved(
      key,
      header.moved,
      counts.reduce((sum, count) => sum + count, 0),
    );
  if (header.held !== undefined) checkHeld(key, header.held, header.moved as PartHeader["moved"]);
  return header as unknown as PartHeader;
}

/**
 * Checks a format 4 header's `held`: a non-empty list of distinct payloads, each of a positive
 * size and named by one of the part's moved payloads (a part holds only what its lines refer to).
 */
function checkHeld(key: string, held: unknown, moved: PartHeader["moved"]): void {
  if (!Array.isArray(held) || held.length === 0)
    throw unreadable("CORRUPT_PART", key, 0, "its header's held payloads are not a list");
  const named = new Set<string>();
  for (const list of Object.values(moved ?? {})) for (const payload of list) named.add(payload.sha256);
  const seen = new Set<string>();
  for (const payload of held as unknown[]) {
    const { sha256, size } = (isObject(payload) ? payload : {}) as Partial<HeldPayload>;
    if (typeof sha256 !== "string" || !SHA256_HEX.test(sha256) || !Number.isSafeInteger(size) || size! < 1)
      throw unreadable(
        "CORRUPT_PART",
        key,
        0,
        `its header's held payload ${JSON.stringify(payload)} is not a SHA-256 and a size`,
      );
    if (seen.has(sha256) || !named.has(sha256))
      throw unreadable(
        "CORRUPT_PART",
        key,
        0,
        `its header holds ${sha256} ${seen.has(sha256) ? "twice" : "and none of its lines refers to it"}`,
      );
    seen.add(sha256);
  }
}

const LINE_INDEX = /^(0|[1-9][0-9]{0,11})$/;

/** Checks a format 3 header's `moved`: each key a line of the part, each value stored moved payloads. */
function checkMoved(key: string, moved: unknown, lines: number): void {
  if (!isObject(moved) || Object.keys(moved).length === 0)
    throw unreadable("CORRUPT_PART", key, 0, "its header's moved payloads are not an object of lines");
  for (const [line, list] of Object.entries(moved)) {
    if (!LINE_INDEX.test(line) || Number(line) >= lines)
      throw unreadable(
        "CORRUPT_PART",
        key,
        0,
        `its header's moved payloads name line ${JSON.stringify(line)}, not one of its ${lines}`,
      );
    try {
      parseMovedPayloads(list);
    } catch (err) {
      throw unreadable(
        "CORRUPT_PART",
        key,
        0,
        `its header's moved payloads of line ${line}: ${(err as Error).message}`,
        err,
      );
    }
  }
}

/** A header's moved payloads by line index; empty for format 2. */
export function movedOf(header: PartHeader): Map<number, readonly MovedPayload[]> {
  const moved = new Map<number, readonly MovedPayload[]>();
  if (header.moved) for (const [line, list] of Object.entries(header.moved)) moved.set(Number(line), list);
  return moved;
}

const NEWLINE = 0x0a;

/**
 * Splits a part's bytes into its header, its entry lines, each turned into what `decodeLine` makes
 * of its JSON text, and the payloads it holds, each checked against its SHA-256; what
 * `decodeLine` throws becomes `INTEGRITY` at that line's offset. Lines are decoded one by one, not
 * as one string split afterwards: one character outside ASCII makes a whole decoded part a
 * two-byte string, and every line sliced from it stays two bytes a character, which doubled what
 * decoding and parsing a part cost. A newline byte never sits inside a UTF-8 sequence, so the
 * text is the same.
 */
export function decodePart<Line>(
  key: string,
  bytes: Uint8Array,
  span: number,
  decodeLine: (line: string) => Line,
): { header: PartHeader; lines: Line[]; held: Map<string, Uint8Array> } {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerEnd = buffer.indexOf(NEWLINE);
  if (headerEnd < 0)
    throw unreadable("CORRUPT_PART", key, buffer.byteLength, "it does not end with a newline (a cut write?)");
  const header = parseHeader(key, buffer.toString("utf8", 0, headerEnd), span);
  const heldBytes = (header.held ?? []).reduce((sum, payload) => sum + payload.size, 0);
  const linesEnd = buffer.byteLength - heldBytes;
  if (linesEnd <= headerEnd || buffer[linesEnd - 1] !== NEWLINE) {
    const why =
      heldBytes > 0
        ? `its lines do not end with a newline ${heldBytes} bytes before its end (a cut write?)`
        : "it does not end with a newline (a cut write?)";
    throw unreadable("CORRUPT_PART", key, Math.max(0, linesEnd), why);
  }
  const lines: Line[] = [];
  for (let start = headerEnd + 1; start < linesEnd; ) {
    const end = buffer.indexOf(NEWLINE, start);
    try {
      lines.push(decodeLine(buffer.toString("utf8", start, end)));
    } catch (err) {
      const why = `its entry line ${lines.length + 1} is not a stored entry (${(err as Error).message})`;
      throw unreadable("CORRUPT_PART", key, start, why, err);
    }
    start = end + 1;
  }
  const total = header.counts.reduce((sum, count) => sum + count, 0);
  if (total !== lines.length)
    throw unreadable("CORRUPT_PART", key, 0, `its header counts ${total} entries, it holds ${lines.length}`);
  const held = new Map<string, Uint8Array>();
  let offset = linesEnd;
  for (const { sha256, size } of header.held ?? []) {
    const payload = buffer.subarray(offset, offset + size);
    if (sha256Hex(payload) !== sha256)
      throw unreadable("CORRUPT_PART", key, offset, `the bytes it holds for ${sha256} hash otherwise`);
    held.set(sha256, payload);
    offset += size;
  }
  return { header, lines, held };
}
