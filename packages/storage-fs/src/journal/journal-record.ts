import { crc32 } from "node:zlib";
import { TEMP_FILE_PREFIX } from "@stowage/core/fs";
import { SYNC_WRITE_MAX_BYTES } from "../small-write.js";

/**
 * The put journal's directory, directly under the root. Its name carries the reserved temp-file
 * prefix, so no key can name it, listings never enter it and `removeStaleTempFiles` never sweeps
 * it (both skip temp-named directories).
 */
export const JOURNAL_DIRECTORY = `${TEMP_FILE_PREFIX}journal`;

/** The first bytes of every segment: a file that does not start with them is not replayed. */
export const SEGMENT_MAGIC = Buffer.from("STOWJNL1", "latin1");

/**
 * A segment's name: the boot it was written in (Linux's `boot_id`; `unknown` elsewhere), then a
 * random part of the writing store. A name of any other form is not a segment and is left alone.
 */
export const SEGMENT_NAME = /^([0-9a-f-]{36}|unknown)\.([0-9a-f]{16})\.log$/;

/**
 * The file a journaled put renamed to its key, told apart from any later file at that key: its
 * inode number, and its birth time where the file system keeps one (so a reused inode number is
 * not mistaken for it).
 */
export interface FileIdentity {
  readonly ino: bigint;
  readonly birthtimeNs: bigint;
}

/** One journaled put: the body the file at `key` must hold while it is the file `identity` names. */
export interface JournalRecord {
  readonly key: string;
  readonly identity: FileIdentity;
  readonly body: Uint8Array;
}

const RECORD_KIND_PUT = 1;
/** payload length (u32) + CRC-32 of the payload (u32). */
export const RECORD_HEADER_BYTES = 8;
/** kind (u8) + key length (u16) + inode (u64) + birth time (u64), then the key and the body. */
const PAYLOAD_FIXED_BYTES = 1 + 2 + 8 + 8;
/**
 * No valid record is longer (a key's length is a u16; keys are validated again on replay): a
 * larger length field is a torn or planted record, never read into memory.
 */
export const MAX_PAYLOAD_BYTES = PAYLOAD_FIXED_BYTES + 0xffff + SYNC_WRITE_MAX_BYTES;

/** A record as appended to a segment: header, then payload. */
export function encodeRecord(record: JournalRecord): Buffer {
  const key = Buffer.from(record.key, "utf8");
  const payloadBytes = PAYLOAD_FIXED_BYTES + key.byteLength + record.body.byteLength;
  const buffer = Buffer.allocUnsafe(RECORD_HEADER_BYTES + payloadBytes);
  let offset = RECORD_HEADER_BYTES;
  offset = buffer.writeUInt8(RECORD_KIND_PUT, offset);
  offset = buffer.writeUInt16LE(key.byteLength, offset);
  offset = buffer.writeBigUInt64LE(record.identity.ino, offset);
  offset = buffer.writeBigUInt64LE(record.identity.birthtimeNs, offset);
  offset += key.copy(buffer, offset);
  buffer.set(record.body, offset);
  buffer.writeUInt32LE(payloadBytes, 0);
  buffer.writeUInt32LE(crc32(buffer.subarray(RECORD_HEADER_BYTES)), 4);
  return buffer;
}

/** The payload length a record header announces, or undefined when no valid record is that long. */
export function payloadLengthOf(header: Buffer): number | undefined {
  const length = header.readUInt32LE(0);
  return length >= PAYLOAD_FIXED_BYTES && length <= MAX_PAYLOAD_BYTES ? length : undefined;
}

/**
 * The record a header and its payload hold, or undefined when they do not hold one (a torn
 * write, a flipped bit, a planted file): replay stops there. The key is returned as written;
 * the caller validates it like any other key.
 */
export function decodeRecord(header: Buffer, payload: Buffer): JournalRecord | undefined {
  if (payload.byteLength !== header.readUInt32LE(0)) return undefined;
  if (crc32(payload) !== header.readUInt32LE(4)) return undefined;
  if (payload.readUInt8(0) !== RECORD_KIND_PUT) return undefined;
  const keyBytes = payload.readUInt16LE(1);
  const keyStart = PAYLOAD_FIXED_BYTES;
  if (keyStart + keyBytes > payload.byteLength) return undefined;
  const key = payload.toString("utf8", keyStart, keyStart + keyBytes);
  return {
    key,
    identity: { ino: payload.readBigUInt64LE(3), birthtimeNs: payload.readBigUInt64LE(11) },
    body: payload.subarray(keyStart + keyBytes),
  };
}
