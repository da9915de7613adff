import { fromSystemError, sha256Hex } from "@stowage/core";
import type { SessionAgent } from "../agents/session-agent.js";
import { DEFAULT_MAX_SESSION_BYTES } from "../archive/manifest.js";
import { readSessionFiles } from "../archive/read-session-files.js";
import {
  assertPositiveInteger,
  assertSessionArchive,
  type SessionArchive,
} from "../archive/session-archive.js";
import { type ChunkedSessionBlob, type ChunkStoreOptions, storeChunkedArchive } from "./chunked-archive.js";

export interface ChunkSessionBlobOptions extends ChunkStoreOptions {
  /** The agent the blob must hold a session of. Default: whatever its manifest says. */
  agent?: SessionAgent;
  /** Cap on the blob's decompressed size. Default 256 MiB. */
  maxBytes?: number;
}

/**
 * Stores a whole session blob (a Stowage archive, or the compatibility format's gzipped JSONL
 * transcript, as a container sent it) as chunks in `blobs`: read through first with every check a
 * restore makes (a blob that could not be restored is refused, INVALID_INPUT, TOO_LARGE or
 * INTEGRITY, and nothing of it is kept), each file cut at line ends into content-defined chunks,
 * each chunk compressed and stored once, image and document payloads stored apart once each.
 * Returns the chunked archive a repository stores in its place; read back through
 * `assembleSessionBlob` (the same archive or transcript, each file byte for byte) or restored with
 * `restoreSession(…, { blobs })`. A chunked archive is not chunked again (INVALID_INPUT, `CHUNKED_BLOB`).
 * A session so small that its chunked manifest would be larger is returned as the blob it was.
 */
export async function chunkSessionBlob(
  archive: SessionArchive,
  options: ChunkSessionBlobOptions,
): Promise<ChunkedSessionBlob> {
  assertSessionArchive(archive, Number.MAX_SAFE_INTEGER);
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_SESSION_BYTES;
  assertPositiveInteger(maxBytes, "maxBytes");
  const { signal } = options;
  try {
    const read = await readSessionFiles(archive, {
      maxBytes,
      ...(options.agent === undefined ? {} : { agent: options.agent }),
      ...(signal ? { signal } : {}),
    });
    const { manifest } = read;
    const contents = manifest.files.map((entry) => read.files.get(entry.path)!);
    const form = read.format === "jsonl" ? "jsonl" : "archive";
    // The compatibility format records no digest: the transcript's is taken as it was read.
    const files =
      form === "jsonl"
        ? manifest.files.map((entry, i) => ({ ...entry, sha256: sha256Hex(contents[i]!) }))
        : manifest.files;
    const chunked = await storeChunkedArchive(
      { ...manifest, files },
      contents,
      { form, codec: archive.codec },
      options,
    );
    if (chunked) return chunked;
    // A session of a few lines: its manifest would outweigh it, so it stays the archive it was.
    const { sessionId, codec, blob, rawSizeBytes } = archive;
    return {
      agent: manifest.agent,
      sessionId,
      ...(manifest.projectKey === undefined ? {} : { projectKey: manifest.projectKey }),
      codec,
      blob,
      rawSizeBytes,
      blobSizeBytes: blob.byteLength,
      storedBytes: blob.byteLength,
      chunks: 0,
      payloads: 0,
    };
  } catch (err) {
    throw fromSystemError(err, `chunk session blob ${archive.sessionId}`);
  }
}
