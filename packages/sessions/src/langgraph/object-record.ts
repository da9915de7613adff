import { StowageError } from "@stowage/core";

/** The first line of every record: what it is, what it belongs to, and the sizes of its parts. */
export type RecordHeader = Record<string, unknown> & { sizes: number[] };

const NEWLINE = 0x0a;

/** One object: its header as a JSON line, then its parts' bytes one after another. */
export function encodeRecord(header: Record<string, unknown>, parts: readonly Uint8Array[]): Uint8Array {
  const line = Buffer.from(`${JSON.stringify({ ...header, sizes: parts.map((part) => part.byteLength) })}\n`);
  return new Uint8Array(Buffer.concat([line, ...parts]));
}

function unreadable(key: string, why: string, cause?: unknown): StowageError {
  return new StowageError("INTEGRITY", `checkpoint record ${key} is not readable: ${why}`, {
    reason: "CORRUPT_RECORD",
    details: { key },
    ...(cause === undefined ? {} : { cause }),
  });
}

/**
 * A record's header and parts; INTEGRITY / CORRUPT_RECORD when it is not one, and FOREIGN_RECORD
 * when its header names something else than `expected` says (a record copied under another key).
 */
export function decodeRecord(
  key: string,
  bytes: Uint8Array,
  expected: Record<string, unknown>,
): { header: RecordHeader; parts: Uint8Array[] } {
  const end = bytes.indexOf(NEWLINE);
  if (end < 0) throw unreadable(key, "it has no header line");
  let header: RecordHeader;
  try {
    header = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, end).toString("utf8")) as RecordHeader;
  } catch (err) {
    throw unreadable(key, `its header is not JSON (${(err as Error).message})`, err);
  }
  if (typeof header !== "object" || header === null || !Array.isArray(header.sizes))
    throw unreadable(key, "its header has no sizes");
  for (const [field, value] of Object.entries(expected)) {
    if (header[field] !== value) {
      throw new StowageError("INTEGRITY", `checkpoint record ${key} was written for another ${field}`, {
        reason: "FOREIGN_RECORD",
        details: { key, field },
      });
    }
  }
  const parts: Uint8Array[] = [];
  let offset = end + 1;
  for (const size of header.sizes) {
    if (!Number.isSafeInteger(size) || size < 0 || offset + size > bytes.byteLength)
      throw unreadable(key, "its parts are shorter than its header says");
    parts.push(bytes.subarray(offset, offset + size));
    offset += size;
  }
  if (offset !== bytes.byteLength) throw unreadable(key, "it holds more than its header says");
  return { header, parts };
}
