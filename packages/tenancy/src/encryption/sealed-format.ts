import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import { StowageError } from "@stowage/core";

// The framed format of an encrypted object body:
//
//   header   "STWE" | version (1 byte) | data key id (16 bytes) | salt (16 bytes)
//   segments ciphertext of up to SEGMENT_BYTES plaintext bytes, then its 16-byte GCM tag
//
// Each object is sealed under its own key, HKDF-SHA256(data key, salt); the salt is random per
// object, so a segment counter is a safe nonce. Every segment's additional data binds the header,
// the segment's index, whether it is the last one, and the object's key in the store: a truncated
// object (no segment flagged last), reordered segments, or one object's bytes put at another key
// fail their tag (INTEGRITY). Every segment but the last is full, so the plaintext size follows
// from the stored size alone (`plaintextSize`): listings need not read a byte.

/** Plaintext bytes per sealed segment. */
export const SEGMENT_BYTES = 64 * 1024;
const MAGIC = Uint8Array.from([0x53, 0x54, 0x57, 0x45]); // "STWE"
const FORMAT_VERSION = 1;
/** Bytes of a data key id, written in every header. */
export const DATA_KEY_ID_BYTES = 16;
const SALT_BYTES = 16;
const TAG_BYTES = 16;
const HEADER_BYTES = MAGIC.length + 1 + DATA_KEY_ID_BYTES + SALT_BYTES;
const OBJECT_KEY_INFO = Buffer.from("stowage/object-key/v1");

/** What the header of a sealed object says. */
export interface SealedHeader {
  /** The header's bytes, bound into every segment. */
  bytes: Uint8Array;
  /** Hex id of the data key the object was sealed under. */
  dataKeyId: string;
  salt: Uint8Array;
}

function integrity(objectKey: string, why: string, cause?: unknown): StowageError {
  return new StowageError("INTEGRITY", `encrypted object ${objectKey} ${why}`, {
    reason: "DECRYPTION_FAILED",
    details: { key: objectKey },
    ...(cause === undefined ? {} : { cause }),
  });
}

/** A fresh header for an object sealed under the data key `dataKeyId` (hex). */
export function newHeader(dataKeyId: string): SealedHeader {
  const salt = randomBytes(SALT_BYTES);
  const bytes = new Uint8Array(HEADER_BYTES);
  bytes.set(MAGIC, 0);
  bytes[MAGIC.length] = FORMAT_VERSION;
  bytes.set(Buffer.from(dataKeyId, "hex"), MAGIC.length + 1);
  bytes.set(salt, MAGIC.length + 1 + DATA_KEY_ID_BYTES);
  return { bytes, dataKeyId, salt };
}

/** The header at the start of `sealed`; INTEGRITY when it is not one this version writes. */
export function parseHeader(sealed: Uint8Array, objectKey: string): SealedHeader {
  if (sealed.byteLength < HEADER_BYTES + TAG_BYTES) throw integrity(objectKey, "is too short to be sealed");
  for (let i = 0; i < MAGIC.length; i++) {
    if (sealed[i] !== MAGIC[i])
      throw integrity(objectKey, "is not sealed (stored in clear or by another tool)");
  }
  if (sealed[MAGIC.length] !== FORMAT_VERSION) {
    throw integrity(
      objectKey,
      `has format version ${sealed[MAGIC.length]}, this version reads ${FORMAT_VERSION}`,
    );
  }
  // A copy, whatever `sealed` is (a Buffer's `slice` is a view, and callers reuse their buffers).
  const bytes = Uint8Array.prototype.slice.call(sealed, 0, HEADER_BYTES);
  const idStart = MAGIC.length + 1;
  return {
    bytes,
    dataKeyId: Buffer.from(bytes.subarray(idStart, idStart + DATA_KEY_ID_BYTES)).toString("hex"),
    salt: bytes.subarray(idStart + DATA_KEY_ID_BYTES),
  };
}

/** The object's own key: derived, never stored. */
export function objectKeyFor(dataKey: Uint8Array, header: SealedHeader): Buffer {
  return Buffer.from(hkdfSync("sha256", dataKey, header.salt, OBJECT_KEY_INFO, 32));
}

/** Writes segment `index`'s nonce into `nonce` (12 bytes): the index, big-endian, at its end. */
function setNonce(nonce: Buffer, index: number): Buffer {
  nonce.writeUInt32BE(index, 8);
  return nonce;
}

/** A buffer for a segment's additional data under `objectKey`: the key's bytes in place at its end. */
function additionalDataBuffer(objectKey: string): Buffer {
  const name = Buffer.from(objectKey, "utf8");
  const buffer = Buffer.alloc(HEADER_BYTES + 5 + name.byteLength);
  name.copy(buffer, HEADER_BYTES + 5);
  return buffer;
}

/** Writes a segment's additional data (header, index, last flag; the key is in place) into `buffer`. */
function setAdditionalData(buffer: Buffer, header: SealedHeader, index: number, last: boolean): Buffer {
  buffer.set(header.bytes, 0);
  buffer.writeUInt32BE(index, HEADER_BYTES);
  buffer[HEADER_BYTES + 4] = last ? 1 : 0;
  return buffer;
}

/**
 * Seals segments of one object key, many times over (the additional data and nonce rewritten in
 * buffers of its own, as `segmentOpener` says why): one segment's ciphertext and its tag a call.
 */
export function segmentSealer(
  objectKey: string,
): (
  key: Buffer,
  header: SealedHeader,
  index: number,
  last: boolean,
  plaintext: Uint8Array,
) => [Buffer, Buffer] {
  const additional = additionalDataBuffer(objectKey);
  const nonce = Buffer.alloc(12);
  return (key, header, index, last, plaintext) => {
    // Both written in place: the cipher copies them.
    const cipher = createCipheriv("aes-256-gcm", key, setNonce(nonce, index));
    cipher.setAAD(setAdditionalData(additional, header, index, last));
    // GCM's `final` returns no bytes: the update is the whole ciphertext.
    const ciphertext = cipher.update(plaintext);
    cipher.final();
    return [ciphertext, cipher.getAuthTag()];
  };
}

/**
 * Opens sealed segments of one object key, many times over: its additional data and nonce are
 * built once in buffers of its own and rewritten per segment. A load opens thousands of
 * SessionStore rows, and per row Node spent more on cipher objects and small buffers than on AES
 * (2 KB rows, one process, alternating: 14 µs a row opened before, 9.6 with the rows' other
 * buffers reused too). One segment's plaintext a call; INTEGRITY when its tag does not hold.
 */
export function segmentOpener(
  objectKey: string,
): (key: Buffer, header: SealedHeader, index: number, last: boolean, sealed: Uint8Array) => Buffer {
  const additional = additionalDataBuffer(objectKey);
  const nonce = Buffer.alloc(12);
  return (key, header, index, last, sealed) => {
    if (sealed.byteLength < TAG_BYTES) throw integrity(objectKey, `is cut inside segment ${index}`);
    // Both written in place: the decipher copies them.
    const decipher = createDecipheriv("aes-256-gcm", key, setNonce(nonce, index));
    decipher.setAAD(setAdditionalData(additional, header, index, last));
    decipher.setAuthTag(sealed.subarray(sealed.byteLength - TAG_BYTES));
    try {
      // GCM's `final` only checks the tag (it returns no bytes): the update is the whole plaintext,
      // handed on only once the tag held.
      const plaintext = decipher.update(sealed.subarray(0, sealed.byteLength - TAG_BYTES));
      decipher.final();
      return plaintext;
    } catch (err) {
      throw integrity(
        objectKey,
        `failed authentication at segment ${index} (tampered, truncated, moved from another key, or sealed under another key)`,
        err,
      );
    }
  };
}

/** Bytes a sealed segment takes in the store when full. */
export const SEALED_SEGMENT_BYTES = SEGMENT_BYTES + TAG_BYTES;

/** The stored size of `plaintextBytes` sealed. */
export function sealedSize(plaintextBytes: number): number {
  return HEADER_BYTES + plaintextBytes + TAG_BYTES * Math.max(1, Math.ceil(plaintextBytes / SEGMENT_BYTES));
}

/** The plaintext size of an object stored as `storedBytes` sealed bytes; 0 for what cannot be one. */
export function plaintextSize(storedBytes: number): number {
  const body = storedBytes - HEADER_BYTES;
  if (body < TAG_BYTES) return 0;
  return body - TAG_BYTES * Math.ceil(body / SEALED_SEGMENT_BYTES);
}

/** Where the segments begin. */
export const SEALED_HEADER_BYTES = HEADER_BYTES;
