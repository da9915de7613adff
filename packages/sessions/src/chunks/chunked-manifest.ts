import { describeValue, parseBlobRef, StowageError } from "@stowage/core";
import {
  assertDeclaredSize,
  checkManifestRecord,
  decodeManifestJson,
  encodeArchiveHeader,
  encodeHeader,
  invalid,
  type SessionArchiveEntry,
  type SessionArchiveManifest,
} from "../archive/manifest.js";
import { isSessionCodec, type SessionCodec } from "../codec/codecs.js";

/**
 * A chunked session archive, format version 2: the archive's preamble and manifest alone (magic
 * `STOWSESS`, version `2`, manifest length, manifest), compressed with the blob's codec. The
 * files are not in it: each file is its chunks (content-defined, cut at line ends, each
 * compressed and stored once in a content store as `blob:sha256:` refs), with the image and
 * document payloads taken out of its text stored apart, once each, and put back where they were.
 * The manifest names every ref it needs, so that what it references is found by reading it.
 */
export const CHUNKED_FORMAT_VERSION = 2;

/** How each chunk is compressed in the content store. */
export const CHUNK_CODEC = "brotli";

/** One chunk of a file: its blob (the chunk compressed) and its size once decompressed. */
export interface StoredChunk {
  ref: string;
  size: number;
}

/**
 * One payload taken out of a file: where its base64 text was (an offset in the file's text
 * without its payloads), its blob (the decoded bytes) and the length of its text.
 */
export interface StoredPayload {
  offset: number;
  ref: string;
  chars: number;
}

/** A file of a chunked archive: what a version 1 manifest says of it, and where its bytes are. */
export interface ChunkedFile extends SessionArchiveEntry {
  chunks: StoredChunk[];
  payloads: StoredPayload[];
}

/** What a chunked archive stands for: the blob a caller is given back, assembled on read. */
export interface AssembledForm {
  /** A Stowage archive, or the compatibility format's one gzipped JSONL transcript. */
  form: "archive" | "jsonl";
  codec: SessionCodec;
  /** The assembled archive's (or transcript's) size, decompressed. */
  rawSizeBytes: number;
}

export interface ChunkedSessionManifest {
  format: "stowage-session";
  version: typeof CHUNKED_FORMAT_VERSION;
  agent: SessionArchiveManifest["agent"];
  agentVersion?: string;
  sessionId: string;
  projectKey?: string;
  capturedAt: string;
  assembled: AssembledForm;
  chunkCodec: typeof CHUNK_CODEC;
  files: ChunkedFile[];
}

/** The version 1 manifest the chunked one stands for: what an assembled archive starts with. */
export function archiveManifestOf(
  chunked: Pick<
    ChunkedSessionManifest,
    "agent" | "agentVersion" | "sessionId" | "projectKey" | "capturedAt" | "files"
  >,
): SessionArchiveManifest {
  return {
    format: "stowage-session",
    version: 1,
    agent: chunked.agent,
    ...(chunked.agentVersion === undefined ? {} : { agentVersion: chunked.agentVersion }),
    sessionId: chunked.sessionId,
    ...(chunked.projectKey === undefined ? {} : { projectKey: chunked.projectKey }),
    capturedAt: chunked.capturedAt,
    files: chunked.files.map(({ path, size, sha256, mtimeMs }) => ({ path, size, sha256, mtimeMs })),
  };
}

/** The size the assembled form decompresses to: the version 1 header and the files, or the one transcript. */
export function assembledSizeOf(form: AssembledForm["form"], manifest: SessionArchiveManifest): number {
  const files = manifest.files.reduce((sum, entry) => sum + entry.size, 0);
  return form === "jsonl" ? files : encodeArchiveHeader(manifest).byteLength + files;
}

/** The preamble and manifest of a chunked archive, before compression. */
export function encodeChunkedBody(manifest: ChunkedSessionManifest): Uint8Array {
  return encodeHeader(manifest, CHUNKED_FORMAT_VERSION);
}

function nonNegativeInteger(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

function refOf(value: unknown, what: string): string {
  if (parseBlobRef(value) === null)
    throw invalid(`${what} must be a blob:sha256: ref, got ${describeValue(value)}`);
  return value as string;
}

function checkChunks(value: unknown, what: string): StoredChunk[] {
  if (!Array.isArray(value)) throw invalid(`${what}.chunks must be an array`);
  return value.map((chunk, index) => {
    const { ref, size } = (chunk ?? {}) as Record<string, unknown>;
    if (!nonNegativeInteger(size) || size === 0) {
      throw invalid(`${what}.chunks[${index}].size must be a positive integer, got ${describeValue(size)}`);
    }
    return { ref: refOf(ref, `${what}.chunks[${index}].ref`), size };
  });
}

function checkPayloads(value: unknown, what: string, textBytes: number): StoredPayload[] {
  if (!Array.isArray(value)) throw invalid(`${what}.payloads must be an array`);
  let last = -1;
  return value.map((payload, index) => {
    const { offset, ref, chars } = (payload ?? {}) as Record<string, unknown>;
    // Two payloads are never next to each other: one base64 run would have been one payload.
    if (!nonNegativeInteger(offset) || offset <= last || offset > textBytes) {
      throw invalid(`${what}.payloads[${index}].offset must be after the previous one and within the text`);
    }
    if (!nonNegativeInteger(chars) || chars === 0 || chars % 4 !== 0) {
      throw invalid(
        `${what}.payloads[${index}].chars must be a positive multiple of 4, got ${describeValue(chars)}`,
      );
    }
    last = offset;
    return { offset, ref: refOf(ref, `${what}.payloads[${index}].ref`), chars };
  });
}

function checkAssembled(value: unknown): AssembledForm {
  const { form, codec, rawSizeBytes } = (value ?? {}) as Record<string, unknown>;
  if (form !== "archive" && form !== "jsonl")
    throw invalid(`assembled.form must be "archive" or "jsonl", got ${describeValue(form)}`);
  if (!isSessionCodec(codec))
    throw invalid(`assembled.codec must be a codec tag, got ${describeValue(codec)}`);
  if (form === "jsonl" && codec !== "gzip")
    throw invalid("assembled.codec of a transcript in the compatibility format must be gzip");
  if (!nonNegativeInteger(rawSizeBytes))
    throw invalid(`assembled.rawSizeBytes must be a size, got ${describeValue(rawSizeBytes)}`);
  return { form, codec, rawSizeBytes };
}

/**
 * Parses and checks a chunked archive's manifest (the JSON after its preamble): every field a
 * version 1 manifest has, checked the same way, then each file's chunks and payloads (strict
 * refs, positive sizes, payloads in order inside the text) adding up to the file's size, and
 * the assembled size as the files give it, within `maxBytes` (TOO_LARGE). INVALID_INPUT
 * (`BAD_MANIFEST`) otherwise.
 */
export function parseChunkedManifest(bytes: Uint8Array, maxBytes: number): ChunkedSessionManifest {
  const record = decodeManifestJson(bytes);
  if (record.version !== CHUNKED_FORMAT_VERSION) {
    throw invalid(`version must be ${CHUNKED_FORMAT_VERSION}, got ${describeValue(record.version)}`);
  }
  if (record.chunkCodec !== CHUNK_CODEC) {
    throw invalid(`chunkCodec must be "${CHUNK_CODEC}", got ${describeValue(record.chunkCodec)}`);
  }
  const assembled = checkAssembled(record.assembled);
  const manifest = checkManifestRecord(record, { compatibility: assembled.form === "jsonl" });
  const rawFiles = record.files as Record<string, unknown>[];
  const files = manifest.files.map((entry, index): ChunkedFile => {
    const what = `files[${index}]`;
    const chunks = checkChunks(rawFiles[index]!.chunks, what);
    const textBytes = chunks.reduce((sum, chunk) => sum + chunk.size, 0);
    const payloads = checkPayloads(rawFiles[index]!.payloads, what, textBytes);
    if (payloads.reduce((sum, payload) => sum + payload.chars, textBytes) !== entry.size) {
      throw invalid(`${what}: its chunks and payloads do not add up to its size ${entry.size}`);
    }
    return { ...entry, chunks, payloads };
  });
  const size = assembledSizeOf(assembled.form, manifest);
  assertDeclaredSize(size, maxBytes);
  if (size !== assembled.rawSizeBytes) {
    throw new StowageError(
      "INTEGRITY",
      `chunked session archive assembles to ${size} bytes, but it records ${assembled.rawSizeBytes}`,
      { reason: "RAW_SIZE_MISMATCH" },
    );
  }
  return {
    format: "stowage-session",
    version: CHUNKED_FORMAT_VERSION,
    agent: manifest.agent,
    ...(manifest.agentVersion === undefined ? {} : { agentVersion: manifest.agentVersion }),
    sessionId: manifest.sessionId,
    ...(manifest.projectKey === undefined ? {} : { projectKey: manifest.projectKey }),
    capturedAt: manifest.capturedAt,
    assembled,
    chunkCodec: CHUNK_CODEC,
    files,
  };
}
