import { promisify } from "node:util";
import { inflateRaw, inflateRawSync } from "node:zlib";
import { assertPrincipal, type Principal, StowageError } from "@stowage/core";
import type { SessionStoreSeal } from "@stowage/sessions";
import { namespaceOf } from "../shared/owner.js";
import type { DataKeys } from "./data-keys.js";
import {
  newHeader,
  objectKeyFor,
  parseHeader,
  SEALED_HEADER_BYTES,
  type SealedHeader,
  segmentOpener,
  segmentSealer,
} from "./sealed-format.js";

// A text of a SessionStore's rows sealed (the PostgreSQL store's batches of entries, and its
// summaries): `stwe4:` then base64 of
//
//   header  the sealed format's header (magic, version, data key id, salt): the `seal` call's
//   index   the text's place in its call (4 bytes, big-endian)
//   segment the ciphertext, as the format seals the segment `index`, flagged last, and its GCM tag,
//           of: the text's UTF-8 bytes compressed as lz4-napi's `compress` writes them (their
//           length, 4 bytes little-endian, then one LZ4 block)
//
// Texts of the earlier versions are still read: `stwe3:` holds the length (4 bytes, big-endian)
// and the bytes compressed by raw DEFLATE at level 1, `stwe2:` the DEFLATE stream without the
// length, `stwe1:` the UTF-8 bytes uncompressed. Each version binds a name of its own (below), so a
// text given another version's tag fails its tag rather than open into bytes read the wrong way.
//
// Why LZ4 (since 2026-12-04): inflating was the largest part of what sealing added to a load
// (about 31 of 47 ms of CPU for the 20 MB of 10,000 entries on a PostgreSQL server, quiet
// machine). On 20 MB of real Claude Code transcripts in 128 KiB texts, LZ4 decompressed in 10–25 ms
// against DEFLATE's 32–52 and compressed in 55–89 against 135–177, at 7.3 MB against 6.1 MB.
// Why the length: the text is decompressed into one buffer of its size. It is sealed with the
// rest, so it cannot be changed; more than MAX_OPENED_BYTES, or a text that decompresses to any
// other length, is INTEGRITY.
//
// Why compressed: ciphertext does not compress, and the rows in clear do (PostgreSQL compresses a
// value over 2 KB, with lz4 on the server). Sealed as they were, an append of 10,000 entries stored
// about 1.35 times the JSON's bytes (base64 of ciphertext), and the database's work on them
// (PGlite's in-memory files grown by copying, TOAST rows, the wire's base64) made it 1.5 to 1.6
// times the clear append's time on PGlite (issue 30 asks for at most 1.3). Compressed (DEFLATE
// level 1 then: about 0.37 times the JSON's bytes, base64 included; LZ4 now: about 0.46 on the
// bench's entries), it took less than the clear append.
// Compressing before sealing lets a row's length depend on how much its text repeats itself:
// someone who can read the rows' sizes and put text of their own into the same batch as a secret
// could, over many appends, learn about the secret from the sizes (as CRIME did with TLS). The
// stored sessions are compressed before they are sealed too (their codec); the README says it.
//
// One header, so one HKDF, per `seal` call (an append), not per text: a text sealed with
// `sealBytes` (a fresh salt, an HKDF and a GCM each) cost about 45 µs when the store sealed a row
// an entry. The format's guarantees hold: the key is the call's own (a random salt), each text's
// nonce is its index, unique within the call, and the additional data binds the header, the index
// and the name below (the version, the principal's namespace and the store's `boundTo`), so a text
// copied to another transcript or principal, or given another index, fails its tag (INTEGRITY).
// `open` hands back the plaintext's bytes: the store cuts a batch's lines out of them without
// decoding it whole. The tag tells a sealed text from a clear one: JSON text never starts with a
// letter `s`.

/** The tag of each version of the text, all of one length, and how its plaintext is read. */
const VERSIONS = {
  "stwe4:": { body: "lz4", name: "session-store-lz4" },
  "stwe3:": { body: "sized", name: "session-store-sized" },
  "stwe2:": { body: "deflated", name: "session-store-deflated" },
  "stwe1:": { body: "uncompressed", name: "session-store" },
} as const;
type Version = keyof typeof VERSIONS;
const isVersion = (tag: string): tag is Version => Object.hasOwn(VERSIONS, tag);
const TAG: Version = "stwe4:";
const TAG_LENGTH = TAG.length;
const INDEX_BYTES = 4;
const LENGTH_BYTES = 4;
const TAG_BYTES = 16;
/** Batch keys a seal keeps (about 100 bytes each): the batches of 4,096 appends. */
const MAX_BATCH_KEYS = 4096;
/**
 * Texts at least this long are compressed and decompressed on libuv's threads, not the event
 * loop's: an entry may be 64 MiB, which takes tens to hundreds of milliseconds.
 */
const ASYNC_CODEC_BYTES = 1024 * 1024;
/** The most an opened text may inflate to: an append's most (one entry is at most 64 MiB). */
const MAX_OPENED_BYTES = 256 * 1024 * 1024;

const inflateRawAsync = promisify(inflateRaw);

let lz4: Promise<typeof import("lz4-napi")> | undefined;
/**
 * lz4-napi, loaded when a seal first needs it: it is a native addon, so on a platform it has no
 * prebuilt binary for, everything else in this package still runs and this seal is UNAVAILABLE.
 */
function loadLz4(): Promise<typeof import("lz4-napi")> {
  lz4 ??= import("lz4-napi").catch((err: unknown) => {
    lz4 = undefined;
    throw new StowageError(
      "UNAVAILABLE",
      `the SessionStore seal compresses with lz4-napi, a native addon that does not load here (${process.platform}-${process.arch}): ${(err as Error).message}`,
      { reason: "CODEC_UNAVAILABLE", cause: err },
    );
  });
  return lz4;
}

const boundName = (namespace: string, boundTo: string, version: Version) =>
  `${VERSIONS[version].name}/${namespace}/${boundTo}`;

function integrity(name: string, why: string, cause?: unknown): StowageError {
  return new StowageError("INTEGRITY", `sealed session store text of ${name} ${why}`, {
    reason: "DECRYPTION_FAILED",
    details: { key: name },
    ...(cause === undefined ? {} : { cause }),
  });
}

/**
 * The seal of `principal`'s SessionStore rows (see `SharedStores.sessionStoreSeal`): under the
 * principal's data key, the scope its namespace's objects are sealed under in the shared store.
 */
export function sealSessionStoreRows(keys: DataKeys, principal: Principal): SessionStoreSeal {
  assertPrincipal(principal);
  const namespace = namespaceOf(principal);
  // The key of each batch opened before, by its header: a load opens every append's batch, one
  // header each, and deriving them all again (an HKDF each, about 35 µs) was a tenth of what
  // sealing added to a load of 10,000 entries on a PostgreSQL server. Bounded; the data keys they
  // come from stay in memory anyway (`createDataKeys` keeps them for the process's life).
  const batchKeys = new Map<string, Promise<Buffer>>();
  const batchKeyOf = (header: SealedHeader, options: { signal?: AbortSignal }) => {
    const id = Buffer.from(header.bytes).toString("hex");
    const known = batchKeys.get(id);
    if (known) return known;
    if (batchKeys.size >= MAX_BATCH_KEYS) batchKeys.delete(batchKeys.keys().next().value!);
    const key = keys
      .dataKey(namespace, header.dataKeyId, options)
      .then((dataKey) => objectKeyFor(dataKey, header));
    batchKeys.set(id, key);
    // A failure (a store down, a key record missing) is not remembered: the next open asks again.
    key.catch(() => batchKeys.delete(id));
    return key;
  };
  return {
    async seal(boundTo, texts, options = {}) {
      const name = boundName(namespace, boundTo, TAG);
      const dataKey = await keys.current(namespace, options);
      const header = newHeader(dataKey.id);
      const key = objectKeyFor(dataKey.key, header);
      const sealRow = segmentSealer(name);
      const { compress, compressSync } = await loadLz4();
      // Each row assembled in one scratch buffer (header, index, ciphertext, tag), then encoded:
      // as in `open`, a buffer a row cost more than the AES.
      let scratch = Buffer.alloc(0);
      const sealed: string[] = [];
      for (const [index, text] of texts.entries()) {
        const plain =
          typeof text === "string"
            ? Buffer.from(text, "utf8")
            : Buffer.from(text.buffer, text.byteOffset, text.byteLength);
        const packed = plain.byteLength < ASYNC_CODEC_BYTES ? compressSync(plain) : await compress(plain);
        const [ciphertext, tag] = sealRow(key, header, index, true, packed);
        const size = SEALED_HEADER_BYTES + INDEX_BYTES + ciphertext.byteLength + TAG_BYTES;
        if (scratch.byteLength < size) scratch = Buffer.alloc(Math.max(size, 2 * scratch.byteLength));
        scratch.set(header.bytes, 0);
        scratch.writeUInt32BE(index, SEALED_HEADER_BYTES);
        ciphertext.copy(scratch, SEALED_HEADER_BYTES + INDEX_BYTES);
        tag.copy(scratch, size - TAG_BYTES);
        sealed.push(TAG + scratch.toString("base64", 0, size));
      }
      return sealed;
    },

    async open(boundTo, texts, options = {}) {
      // A version's texts are opened under its own name: one opener each, made when first met.
      const openers: Partial<Record<Version, ReturnType<typeof segmentOpener>>> = {};
      const openerOf = (version: Version) =>
        (openers[version] ??= segmentOpener(boundName(namespace, boundTo, version)));
      const name = boundName(namespace, boundTo, TAG);
      // Rows of a batch are read one after another, so a row's header is compared with the last
      // one's first, and parsed (a copy and a hex id) only when it is another batch's.
      let last: { header: SealedHeader; key: Buffer } | undefined;
      const batchOf = async (bytes: Buffer) => {
        const header = parseHeader(bytes.subarray(0, SEALED_HEADER_BYTES + TAG_BYTES), name);
        last = { header, key: await batchKeyOf(header, options) };
        return last;
      };
      const sameBatch = (bytes: Buffer) =>
        last !== undefined &&
        bytes.compare(last.header.bytes, 0, SEALED_HEADER_BYTES, 0, SEALED_HEADER_BYTES) === 0;
      // Each row decoded into one scratch buffer, grown as needed: the decipher copies out what
      // it opens, so the next row may overwrite it (a fresh buffer a row cost more than the AES).
      let scratch = Buffer.alloc(0);
      const opened: Buffer[] = [];
      for (const text of texts) {
        const version = text.slice(0, TAG_LENGTH);
        if (!isVersion(version)) throw integrity(name, "is not sealed (stored in clear or by another tool)");
        const encoded = text.slice(TAG_LENGTH);
        const most = Math.ceil((encoded.length * 3) / 4);
        if (scratch.byteLength < most) scratch = Buffer.alloc(Math.max(most, 2 * scratch.byteLength));
        const bytes = scratch.subarray(0, scratch.write(encoded, "base64"));
        if (bytes.byteLength < SEALED_HEADER_BYTES + INDEX_BYTES + TAG_BYTES)
          throw integrity(name, "is too short to be sealed");
        // Awaited only for another batch's key: an await a row would cost more than its header check.
        const batch = sameBatch(bytes) ? last! : await batchOf(bytes);
        const index = bytes.readUInt32BE(SEALED_HEADER_BYTES);
        const segment = bytes.subarray(SEALED_HEADER_BYTES + INDEX_BYTES);
        const plain = openerOf(version)(batch.key, batch.header, index, true, segment);
        opened.push(await readBody(VERSIONS[version].body, plain, name));
      }
      return opened;
    },
  };
}

/** A version's opened plaintext as the text's UTF-8 bytes. */
function readBody(
  body: (typeof VERSIONS)[Version]["body"],
  plain: Buffer,
  name: string,
): Promise<Buffer> | Buffer {
  if (body === "uncompressed") return plain;
  if (body === "lz4") return decompressed(plain, name);
  if (body === "deflated") return inflated(plain, name, undefined);
  if (plain.byteLength < LENGTH_BYTES) throw integrity(name, "is too short to hold its length");
  return inflated(plain.subarray(LENGTH_BYTES), name, plain.readUInt32BE(0));
}

/**
 * The text LZ4 `packed` (lz4-napi's `compress`: its length, little-endian, then a block)
 * decompresses to. Only a holder of the key can have sealed what fails here (the tag held), but
 * what it holds is still bounded: INTEGRITY, not an out-of-memory, for a recorded length over
 * MAX_OPENED_BYTES, another length than the recorded one, or a block that is not one.
 */
async function decompressed(packed: Buffer, name: string): Promise<Buffer> {
  if (packed.byteLength < LENGTH_BYTES) throw integrity(name, "is too short to hold its length");
  const length = packed.readUInt32LE(0);
  if (length > MAX_OPENED_BYTES)
    throw integrity(name, `records a length of ${length} bytes, more than ${MAX_OPENED_BYTES}`);
  const { uncompress, uncompressSync } = await loadLz4();
  let text: Buffer;
  try {
    text = packed.byteLength < ASYNC_CODEC_BYTES / 4 ? uncompressSync(packed) : await uncompress(packed);
  } catch (err) {
    throw integrity(name, `does not decompress (not an LZ4 block of ${length} bytes)`, err);
  }
  if (text.byteLength !== length)
    throw integrity(name, `decompresses to ${text.byteLength} bytes where it records ${length}`);
  return text;
}

/**
 * The text `packed` inflates to, `length` bytes when its version records it (one output buffer of
 * that size). Only a holder of the key can have sealed what fails here (the tag held), but what it
 * holds is still bounded: INTEGRITY, not an out-of-memory, for more than MAX_OPENED_BYTES, another
 * length than the recorded one, or a stream that is not one.
 */
async function inflated(packed: Buffer, name: string, length: number | undefined): Promise<Buffer> {
  if (length !== undefined && length > MAX_OPENED_BYTES)
    throw integrity(name, `records a length of ${length} bytes, more than ${MAX_OPENED_BYTES}`);
  // Node's zlib wants an output chunk of at least 64 bytes and a bound of at least 1.
  const options =
    length === undefined
      ? { maxOutputLength: MAX_OPENED_BYTES }
      : { maxOutputLength: Math.max(1, length), chunkSize: Math.max(64, length) };
  let text: Buffer;
  try {
    text =
      packed.byteLength < ASYNC_CODEC_BYTES / 4
        ? inflateRawSync(packed, options)
        : await inflateRawAsync(packed, options);
  } catch (err) {
    throw integrity(
      name,
      `does not inflate (more than ${length ?? MAX_OPENED_BYTES} bytes, or not a DEFLATE stream)`,
      err,
    );
  }
  if (length !== undefined && text.byteLength !== length)
    throw integrity(name, `inflates to ${text.byteLength} bytes where it records ${length}`);
  return text;
}
