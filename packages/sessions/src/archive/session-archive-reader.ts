import { createHash } from "node:crypto";
import { type ContentStore, concatBytes, describeValue, StowageError, throwIfAborted } from "@stowage/core";
import { assertSessionAgent, type SessionAgent } from "../agents/session-agent.js";
import { assembledBytes } from "../chunks/assemble-chunks.js";
import {
  CHUNKED_FORMAT_VERSION,
  type ChunkedSessionManifest,
  parseChunkedManifest,
} from "../chunks/chunked-manifest.js";
import { decompressBounded } from "../codec/compress.js";
import { gzipTrailerSize } from "../codec/gzip-trailer.js";
import { ChunkReader } from "./chunk-reader.js";
import { LEGACY_OWNER_PROBE_BYTES, legacyAgentOwner } from "./collect-files.js";
import { LEGACY_AGENT_FILE_PATTERN } from "./entry-path.js";
import { JsonlChecker } from "./jsonl-checker.js";
import {
  ARCHIVE_FORMAT_VERSION,
  ARCHIVE_MAGIC,
  ARCHIVE_PREAMBLE_BYTES,
  MAX_MANIFEST_BYTES,
  parseManifest,
  readPreamble,
  type SessionArchiveEntry,
  type SessionArchiveManifest,
} from "./manifest.js";
import type { SessionArchive } from "./session-archive.js";

/**
 * What a session blob holds once decompressed:
 * - `archive`: a Stowage session archive (magic `STOWSESS`, manifest, files);
 * - `jsonl`: the compatibility format of the session-persistence design, one JSONL transcript
 *   (a Claude Code `<sessionId>.jsonl`), gzipped as is. JSON Lines never start with `STOWSESS`,
 *   so the two cannot be mistaken for each other;
 * - `chunked`: a chunked archive (`STOWSESS` version 2), its manifest alone: the files are chunks
 *   in a content store, assembled on read into the archive or transcript it stands for.
 */
export type SessionBlobFormat = "archive" | "jsonl" | "chunked";

const magicBytes = new TextEncoder().encode(ARCHIVE_MAGIC);

/** A blob being read: its manifest known (for `jsonl`, one made for its single file). */
export interface OpenedSessionArchive {
  /** What is read: an archive, or one transcript (a chunked blob: what it assembles to). */
  format: "archive" | "jsonl";
  /** True when the blob is a chunked archive, read from its content store as it is assembled. */
  chunked: boolean;
  manifest: SessionArchiveManifest;
  readonly reader: ChunkReader;
  /** Bytes of the preamble and manifest (0 for `jsonl`). */
  headerBytes: number;
  /** The archive as read: a chunked blob's codec and raw size are those of what it assembles to. */
  archive: SessionArchive;
  /** Whether the bytes read must add up to `archive.rawSizeBytes` exactly (see `recordedSizeIsExact`). */
  exactSize: boolean;
}

/**
 * Whether the blob's decompressed size must be exactly the recorded one. It must, except for a
 * gzip blob recorded with its own trailer's size: that is the last member's alone when the blob
 * has several (see `readSessionEntry`), so the whole may be larger.
 */
function recordedSizeIsExact(archive: SessionArchive): boolean {
  if (archive.codec !== "gzip") return true;
  try {
    return gzipTrailerSize(archive.blob) !== archive.rawSizeBytes;
  } catch {
    return true; // not gzip at all: decompression fails with CORRUPT_BLOB before any size matters
  }
}

/** Where a blob's bytes come from once it is opened: its decompression, or a chunked blob's assembly. */
interface SessionBytes {
  reader: ChunkReader;
  archive: SessionArchive;
  chunked: boolean;
  exactSize: boolean;
}

/** A chunked blob was given where its content store was not. */
function chunkedWithoutContent(): StowageError {
  return new StowageError(
    "INVALID_INPUT",
    "session blob is a chunked archive: its files are in a content store, which was not given (blobs)",
    { reason: "CHUNKED_BLOB" },
  );
}

/**
 * A chunked archive's manifest, read from its decompressed bytes (`reader`, at the start) to the
 * end and checked: the preamble, the manifest, nothing after it, the session and raw size it was
 * recorded with.
 */
async function chunkedManifestFrom(
  reader: ChunkReader,
  archive: SessionArchive,
  maxBytes: number,
): Promise<ChunkedSessionManifest> {
  const length = readPreamble(
    await reader.readExactly(ARCHIVE_PREAMBLE_BYTES, "the preamble"),
    CHUNKED_FORMAT_VERSION,
  );
  const manifest = parseChunkedManifest(await reader.readExactly(length, "the manifest"), maxBytes);
  if (!(await reader.atEnd())) {
    throw new StowageError("INTEGRITY", "chunked session archive has bytes after its manifest", {
      reason: "TRAILING_BYTES",
    });
  }
  if (manifest.sessionId !== archive.sessionId) {
    throw new StowageError(
      "INVALID_INPUT",
      `session archive holds session ${manifest.sessionId}, but it was labelled ${archive.sessionId}`,
      { reason: "SESSION_MISMATCH" },
    );
  }
  if (manifest.assembled.rawSizeBytes !== archive.rawSizeBytes) {
    throw new StowageError(
      "INTEGRITY",
      `chunked session archive assembles to ${manifest.assembled.rawSizeBytes} bytes, but it was recorded as ${archive.rawSizeBytes}`,
      { reason: "RAW_SIZE_MISMATCH" },
    );
  }
  return manifest;
}

/**
 * TOO_LARGE (`DECOMPRESSED_TOO_LARGE`) when the size a blob was recorded with is over `maxBytes`:
 * checked before a byte is decompressed, whatever the blob holds.
 */
function assertRecordedSizeWithin(archive: SessionArchive, maxBytes: number): void {
  if (archive.rawSizeBytes > maxBytes) {
    throw new StowageError(
      "TOO_LARGE",
      `session archive is ${archive.rawSizeBytes} bytes decompressed, over the limit of ${maxBytes} bytes (maxBytes)`,
      { reason: "DECOMPRESSED_TOO_LARGE", details: { limit: maxBytes, declared: archive.rawSizeBytes } },
    );
  }
}

/**
 * A chunked archive's manifest, checked (see {@link chunkedManifestFrom}), without reading its
 * chunks; null when `archive` is not a chunked archive. A recorded size over `maxBytes` is
 * TOO_LARGE first, as {@link openSessionArchive} has it.
 */
export async function readChunkedManifest(
  archive: SessionArchive,
  options: { maxBytes: number; signal?: AbortSignal },
): Promise<ChunkedSessionManifest | null> {
  assertRecordedSizeWithin(archive, options.maxBytes);
  const reader = new ChunkReader(
    decompressBounded(archive.blob, archive.codec, {
      maxBytes: Math.min(options.maxBytes, ARCHIVE_PREAMBLE_BYTES + MAX_MANIFEST_BYTES),
      ...(options.signal ? { signal: options.signal } : {}),
    }),
  );
  try {
    const start = await reader.peek(ARCHIVE_PREAMBLE_BYTES);
    if (!isChunkedPreamble(start)) return null;
    return await chunkedManifestFrom(reader, archive, options.maxBytes);
  } finally {
    await reader.close().catch(() => {});
  }
}

/** True when `start` is the preamble of a chunked archive: the magic, then version 2. */
function isChunkedPreamble(start: Uint8Array): boolean {
  return (
    start.byteLength === ARCHIVE_PREAMBLE_BYTES &&
    magicBytes.every((byte, i) => start[i] === byte) &&
    start[8] === CHUNKED_FORMAT_VERSION
  );
}

/**
 * The blob's decompressed bytes; for a chunked archive (version 2, told by its preamble), its
 * manifest read whole and checked, then the bytes it assembles to from `blobs`.
 */
async function sessionBytesOf(
  archive: SessionArchive,
  options: { maxBytes: number; blobs?: ContentStore; signal?: AbortSignal },
): Promise<SessionBytes> {
  const { maxBytes, signal } = options;
  const exactSize = recordedSizeIsExact(archive);
  const reader = new ChunkReader(
    decompressBounded(archive.blob, archive.codec, {
      maxBytes,
      ...(exactSize ? { recordedBytes: archive.rawSizeBytes } : {}),
      ...(signal ? { signal } : {}),
    }),
  );
  try {
    if (!isChunkedPreamble(await reader.peek(ARCHIVE_PREAMBLE_BYTES)))
      return { reader, archive, chunked: false, exactSize };
    const manifest = await chunkedManifestFrom(reader, archive, maxBytes);
    if (!options.blobs) throw chunkedWithoutContent();
    const assembled = assembledBytes(manifest, options.blobs, {
      // An archive's files are checked against its manifest as they are read; a transcript here.
      verify: manifest.assembled.form === "jsonl",
      ...(signal ? { signal } : {}),
    });
    return {
      reader: new ChunkReader(assembled),
      archive: { ...archive, codec: manifest.assembled.codec, rawSizeBytes: manifest.assembled.rawSizeBytes },
      chunked: true,
      exactSize: true,
    };
  } catch (err) {
    await reader.close().catch(() => {});
    throw err;
  }
}

/**
 * Starts reading a blob: decompression streamed and counted (a bomb fails with TOO_LARGE past
 * `maxBytes`, and with INTEGRITY past a recorded size that must be exact), the format told by
 * the magic, the manifest read and checked. `agent` is what the caller expects (INVALID_INPUT, reason `AGENT_MISMATCH`, when the manifest says another);
 * it is the agent of a `jsonl` blob, which records none (Claude Code is the only agent whose
 * session is one JSONL file that restores without more: `UNSUPPORTED_AGENT` otherwise). A
 * chunked archive is read from `blobs` as it is assembled (INVALID_INPUT, `CHUNKED_BLOB`,
 * without it), and then exactly as the blob it assembles to.
 */
export async function openSessionArchive(
  given: SessionArchive,
  options: { maxBytes: number; agent?: SessionAgent; blobs?: ContentStore; signal?: AbortSignal },
): Promise<OpenedSessionArchive> {
  const { maxBytes } = options;
  if (options.agent !== undefined) assertSessionAgent(options.agent);
  assertRecordedSizeWithin(given, maxBytes);
  const { reader, archive, chunked, exactSize } = await sessionBytesOf(given, options);
  const opened = { reader, archive, chunked, exactSize };
  try {
    const start = await reader.peek(magicBytes.byteLength);
    const isArchive =
      start.byteLength === magicBytes.byteLength && magicBytes.every((byte, i) => start[i] === byte);
    if (!isArchive) {
      const agent = options.agent ?? "claude-code";
      if (agent !== "claude-code") {
        throw new StowageError(
          "INVALID_INPUT",
          `a session blob in the compatibility format (one gzipped JSONL file) is a Claude Code transcript; ${agent} sessions travel as Stowage archives`,
          { reason: "UNSUPPORTED_AGENT" },
        );
      }
      if (archive.codec !== "gzip") {
        throw new StowageError(
          "INVALID_INPUT",
          `blob is not a Stowage session archive (bad magic), and the compatibility format (one JSONL file) is gzip only, not ${archive.codec}`,
          { reason: "NOT_AN_ARCHIVE" },
        );
      }
      const manifest: SessionArchiveManifest = {
        format: "stowage-session",
        version: ARCHIVE_FORMAT_VERSION,
        agent,
        sessionId: archive.sessionId,
        capturedAt: new Date().toISOString(),
        files: [
          { path: `${archive.sessionId}.jsonl`, size: archive.rawSizeBytes, sha256: "", mtimeMs: Date.now() },
        ],
      };
      return { ...opened, format: "jsonl", manifest, headerBytes: 0 };
    }
    const manifestLength = readPreamble(await reader.readExactly(ARCHIVE_PREAMBLE_BYTES, "the preamble"));
    const manifest = parseManifest(await reader.readExactly(manifestLength, "the manifest"), maxBytes);
    // The manifest gives the archive's whole size: a recorded size that differs is refused now,
    // before its files are decompressed (the exception for a gzip trailer's size is for the
    // compatibility format only; an archive is one stream written whole).
    const size =
      ARCHIVE_PREAMBLE_BYTES + manifestLength + manifest.files.reduce((sum, file) => sum + file.size, 0);
    if (size !== archive.rawSizeBytes) {
      throw new StowageError(
        "INTEGRITY",
        `session archive's manifest gives ${size} bytes decompressed, but it was recorded as ${archive.rawSizeBytes}`,
        { reason: "RAW_SIZE_MISMATCH" },
      );
    }
    if (manifest.sessionId !== archive.sessionId) {
      throw new StowageError(
        "INVALID_INPUT",
        `session archive holds session ${manifest.sessionId}, but it was labelled ${archive.sessionId}`,
        { reason: "SESSION_MISMATCH" },
      );
    }
    if (options.agent !== undefined && manifest.agent !== options.agent) {
      throw new StowageError(
        "INVALID_INPUT",
        `session archive holds a ${manifest.agent} session, not a ${options.agent} one`,
        { reason: "AGENT_MISMATCH", details: { agent: manifest.agent } },
      );
    }
    return { ...opened, format: "archive", manifest, headerBytes: ARCHIVE_PREAMBLE_BYTES + manifestLength };
  } catch (err) {
    await reader.close().catch(() => {});
    throw err;
  }
}

/**
 * Reads one entry's bytes, in manifest order, into `sink`, checking them: the sha256 the
 * manifest gives (INTEGRITY, `SHA256_MISMATCH`), JSON Lines for a `jsonl` blob, and for a
 * legacy `agent-<id>.jsonl` that its lines name this session (INVALID_INPUT, `FOREIGN_ENTRY`):
 * a restore never writes another session's file. Returns the entry's first `keepBytes` bytes.
 */
export async function readSessionEntry(
  opened: OpenedSessionArchive,
  entry: SessionArchiveEntry,
  sink: (chunk: Uint8Array) => Promise<void> | void,
  options: { keepBytes?: number; signal?: AbortSignal } = {},
): Promise<Uint8Array> {
  const { reader, manifest } = opened;
  const isLegacyAgent = manifest.agent === "claude-code" && LEGACY_AGENT_FILE_PATTERN.test(entry.path);
  const keepBytes = Math.max(options.keepBytes ?? 0, isLegacyAgent ? LEGACY_OWNER_PROBE_BYTES : 0);
  const kept: Uint8Array[] = [];
  let keptBytes = 0;
  const take = async (part: Uint8Array) => {
    throwIfAborted(options.signal, "read session archive");
    if (keptBytes < keepBytes) {
      const slice = part.slice(0, keepBytes - keptBytes);
      kept.push(slice);
      keptBytes += slice.byteLength;
    }
    await sink(part);
  };
  if (opened.format === "jsonl") {
    const checker = new JsonlChecker(manifest.sessionId);
    let size = 0;
    for await (const piece of reader.readRest()) {
      checker.update(piece);
      size += piece.byteLength;
      await take(piece);
    }
    checker.finish();
    const recorded = opened.archive.rawSizeBytes;
    // gzip checks each member's own length and CRC as it decompresses. The size `fromTransport`
    // takes when a sender gives none is the last member's: a blob of several members (valid
    // gzip) is then measured instead. Any other size that does not match is refused.
    if (size !== recorded && (opened.exactSize || recorded !== gzipTrailerSize(opened.archive.blob))) {
      throw new StowageError(
        "INTEGRITY",
        `session transcript decompressed to ${size} bytes, but it was recorded as ${recorded}`,
        { reason: "RAW_SIZE_MISMATCH" },
      );
    }
    entry.size = size;
    return concatBytes(kept, keptBytes);
  }
  const hash = createHash("sha256");
  for await (const part of reader.readRange(entry.size, `file ${describeValue(entry.path)}`)) {
    hash.update(part);
    await take(part);
  }
  const actual = hash.digest("hex");
  if (actual !== entry.sha256) {
    throw new StowageError(
      "INTEGRITY",
      `session archive entry ${describeValue(entry.path)} has sha256 ${actual}, but the manifest says ${entry.sha256}`,
      { reason: "SHA256_MISMATCH", details: { path: entry.path } },
    );
  }
  const head = concatBytes(kept, keptBytes);
  if (isLegacyAgent && legacyAgentOwner(head) !== manifest.sessionId) {
    throw new StowageError(
      "INVALID_INPUT",
      `session archive entry ${describeValue(entry.path)} is a legacy agent transcript whose lines do not name session ${manifest.sessionId}; it is not restored over another session's file`,
      { reason: "FOREIGN_ENTRY", details: { path: entry.path } },
    );
  }
  return head;
}

/** After the last entry: no trailing byte (INTEGRITY) and the recorded raw size matches. */
export async function finishSessionArchive(opened: OpenedSessionArchive): Promise<void> {
  if (opened.format === "jsonl") return;
  if (!(await opened.reader.atEnd())) {
    throw new StowageError("INTEGRITY", "session archive has bytes after its last file", {
      reason: "TRAILING_BYTES",
    });
  }
  const total = opened.headerBytes + opened.manifest.files.reduce((sum, entry) => sum + entry.size, 0);
  if (total !== opened.archive.rawSizeBytes) {
    throw new StowageError(
      "INTEGRITY",
      `session archive decompressed to ${total} bytes, but it was recorded as ${opened.archive.rawSizeBytes}`,
      { reason: "RAW_SIZE_MISMATCH" },
    );
  }
}
