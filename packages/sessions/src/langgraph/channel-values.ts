import type { SerializerProtocol } from "@langchain/langgraph-checkpoint";
import {
  findEntryPayloads,
  type MovedPayload,
  parseMovedPayloads,
  restoreEntryPayloads,
} from "@stowage/blob-store";
import {
  BLOB_REF_PREFIX,
  type ContentStore,
  describeValue,
  isSha256Hex,
  mapConcurrent,
  parseBlobRef,
  StowageError,
  sha256Hex,
} from "@stowage/core";
import { storePayloads } from "../session-store/entry-payloads.js";
import { type MovedBinary, putBackBinaries, takeBinaries } from "./binary-records.js";
import type { StoredValue } from "./checkpoint-records.js";

/** The blob store of a saver: images and binary of at least 1 KiB move there. */
export type CheckpointBlobs = Pick<ContentStore, "put" | "get">;

/** How a saver turns values into stored bytes and back. */
export interface ValueCodec {
  serde: SerializerProtocol;
  blobs: CheckpointBlobs | undefined;
}

/**
 * Serialized values of at least this many bytes are searched for images (base64 of at least as many
 * characters) and binary (Uint8Arrays of at least as many bytes) to move to the blob store.
 */
const BLOB_THRESHOLD = 1024;
/** The type suffix of a value whose images or binary moved to the blob store. */
const WITH_BLOBS = "+blobs";
/** Blobs read at once for one value. */
const BLOB_CONCURRENCY = 8;

/** What precedes a value with blobs, on its first line. */
interface BlobsHeader {
  /** A whole `bytes` value's blob. */
  blob?: string;
  /** Images and documents moved out of a JSON value (blob-store's record of each). */
  images?: MovedPayload[];
  /** Uint8Arrays moved out of a JSON value. */
  binaries?: MovedBinary[];
}

const utf8 = (bytes: Uint8Array) =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");

// Base64 digits, padding, the URL-safe digits and `\` (a JSON escape of a line break in wrapped base64).
const isBase64Char = (code: number) =>
  (code >= 0x41 && code <= 0x5a) ||
  (code >= 0x61 && code <= 0x7a) ||
  (code >= 0x30 && code <= 0x39) ||
  code === 0x2b ||
  code === 0x2f ||
  code === 0x3d ||
  code === 0x2d ||
  code === 0x5f ||
  code === 0x5c;

/**
 * Whether a JSON text may hold something to move: a nested Uint8Array, or a run of base64 as long
 * as the threshold. One pass over the text, much cheaper than parsing it: most values have neither.
 */
function mayHoldBlobs(text: string): boolean {
  if (text.includes('"Uint8Array"')) return true;
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    if (isBase64Char(text.charCodeAt(i))) {
      if (++run >= BLOB_THRESHOLD) return true;
    } else run = 0;
  }
  return false;
}

const withHeader = (header: BlobsHeader, body: Uint8Array | string) =>
  new Uint8Array(Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`), Buffer.from(body)]));

/** A JSON value's images and binary moved to `blobs`, or undefined when it holds none. */
async function moveFromJson(blobs: CheckpointBlobs, text: string): Promise<Uint8Array | undefined> {
  if (!mayHoldBlobs(text)) return undefined;
  const parsed: unknown = JSON.parse(text);
  // A value that is one string (a data URL alone) has no place a moved payload's path can name.
  if (typeof parsed !== "object" || parsed === null) return undefined;
  const found = findEntryPayloads([parsed], { threshold: BLOB_THRESHOLD });
  const [externalized] = found.entries;
  const root = externalized?.entry ?? parsed;
  const binaries = takeBinaries(root, BLOB_THRESHOLD, sha256Hex);
  if (!externalized && binaries.moved.length === 0) return undefined;
  await storePayloads(blobs, [...found.payloads, ...binaries.blobs], undefined);
  const header: BlobsHeader = {
    ...(externalized ? { images: externalized.moved } : {}),
    ...(binaries.moved.length > 0 ? { binaries: binaries.moved } : {}),
  };
  return withHeader(header, JSON.stringify(root));
}

/**
 * `value` as a store keeps it: serialized by the saver's serializer, and, with a blob store, its
 * images (where agents put them: content blocks, data URLs) and binary (a `bytes` value,
 * Uint8Arrays inside a value) of at least 1 KiB moved there, each blob durable before this
 * returns. What moved is read back identical.
 */
export async function encodeValue(codec: ValueCodec, value: unknown): Promise<StoredValue> {
  const [type, bytes] = await codec.serde.dumpsTyped(value);
  const { blobs } = codec;
  if (!blobs || bytes.byteLength < BLOB_THRESHOLD) return { type, bytes };
  if (type === "bytes") {
    const sha256 = sha256Hex(bytes);
    await storePayloads(blobs, [[sha256, bytes]], undefined);
    return { type: type + WITH_BLOBS, bytes: withHeader({ blob: BLOB_REF_PREFIX + sha256 }, "") };
  }
  if (type !== "json") return { type, bytes };
  const moved = await moveFromJson(blobs, utf8(bytes));
  return moved ? { type: type + WITH_BLOBS, bytes: moved } : { type, bytes };
}

function corrupt(why: string, cause?: unknown): StowageError {
  return new StowageError("INTEGRITY", `a stored checkpoint value is not readable: ${why}`, {
    reason: "CORRUPT_VALUE",
    ...(cause === undefined ? {} : { cause }),
  });
}

/** Why `value` is not a list of moved binaries, or undefined. */
function binariesProblem(value: unknown): string | undefined {
  if (!Array.isArray(value)) return "binaries is not an array";
  for (const item of value as Partial<MovedBinary>[]) {
    if (typeof item !== "object" || item === null) return "a binary is not an object";
    if (!Array.isArray(item.path) || item.path.length === 0) return "a binary has no path";
    if (!item.path.every((step) => typeof step === "string" || (Number.isInteger(step) && step >= 0)))
      return "a binary's path has a step that is neither a key nor an index";
    if (typeof item.sha256 !== "string" || !isSha256Hex(item.sha256)) return "a binary has no SHA-256";
    if (item.method !== null && item.method !== "from") return "a binary has an unknown method";
  }
  return undefined;
}

function parseHeader(text: string): { header: BlobsHeader; body: string } {
  const newline = text.indexOf("\n");
  if (newline < 0) throw corrupt("its blob header has no end");
  let header: BlobsHeader;
  try {
    header = JSON.parse(text.slice(0, newline)) as BlobsHeader;
    if (header.images !== undefined) header.images = parseMovedPayloads(header.images);
  } catch (err) {
    throw corrupt(`its blob header does not parse (${(err as Error).message})`, err);
  }
  if (typeof header !== "object" || header === null) throw corrupt("its blob header is not an object");
  const problem = header.binaries === undefined ? undefined : binariesProblem(header.binaries);
  if (problem) throw corrupt(problem);
  return { header, body: text.slice(newline + 1) };
}

async function readBlob(blobs: CheckpointBlobs, sha256: string): Promise<Uint8Array> {
  const bytes = await blobs.get(sha256);
  if (bytes) return bytes;
  const ref = BLOB_REF_PREFIX + sha256;
  throw new StowageError("INTEGRITY", `blob ${ref} of a stored checkpoint value is missing`, {
    reason: "MISSING_BLOB",
    details: { ref },
  });
}

/**
 * A stored value back as the serializer gives it, its images and binary read from the blob store
 * (INTEGRITY / MISSING_BLOB when one is gone: never a value with a ref where its bytes were).
 */
export async function decodeValue(codec: ValueCodec, stored: StoredValue): Promise<unknown> {
  if (!stored.type.endsWith(WITH_BLOBS)) return codec.serde.loadsTyped(stored.type, stored.bytes);
  const { blobs } = codec;
  if (!blobs) {
    // The SessionStore's code and reason for the same case: the store to read from is not given.
    throw new StowageError(
      "UNAVAILABLE",
      "a stored checkpoint value keeps images or binary in the blob store: open the saver with `blobs`",
      { reason: "NO_BLOB_STORE" },
    );
  }
  const type = stored.type.slice(0, -WITH_BLOBS.length);
  const { header, body } = parseHeader(utf8(stored.bytes));
  if (type === "bytes") {
    const sha256 = parseBlobRef(header.blob);
    if (sha256 === null) throw corrupt(`its blob ref is ${describeValue(header.blob)}`);
    return codec.serde.loadsTyped(type, await readBlob(blobs, sha256));
  }
  let root: unknown;
  try {
    root = JSON.parse(body);
  } catch (err) {
    throw corrupt(`its JSON does not parse (${(err as Error).message})`, err);
  }
  if (header.binaries) {
    const wanted = [...new Set(header.binaries.map((binary) => binary.sha256))];
    const fetched = await mapConcurrent(wanted, BLOB_CONCURRENCY, (sha256) => readBlob(blobs, sha256));
    const bySha = new Map(wanted.map((sha256, index) => [sha256, fetched[index]!]));
    putBackBinaries(root, header.binaries, (sha256) => bySha.get(sha256)!);
  }
  if (header.images) {
    const holder = [root];
    await restoreEntryPayloads(holder, new Map([[0, header.images]]), { blobs });
    root = holder[0];
  }
  return codec.serde.loadsTyped(type, JSON.stringify(root));
}
