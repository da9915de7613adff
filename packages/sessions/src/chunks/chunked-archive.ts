import type { ContentStore } from "@stowage/core";
import type { SessionAgent } from "../agents/session-agent.js";
import type { SessionArchiveManifest } from "../archive/manifest.js";
import type { SessionArchive } from "../archive/session-archive.js";
import { BROTLI_QUALITY_BY_AGENT, type SessionCodec } from "../codec/codecs.js";
import { compressChunks } from "../codec/compress.js";
import {
  type AssembledForm,
  assembledSizeOf,
  CHUNK_CODEC,
  CHUNKED_FORMAT_VERSION,
  type ChunkedSessionManifest,
  encodeChunkedBody,
} from "./chunked-manifest.js";
import { storeSessionFiles } from "./store-chunks.js";

/** A session stored as chunks: the chunked archive (its manifest) that a repository's row holds. */
export interface ChunkedSessionBlob extends SessionArchive {
  agent: SessionAgent;
  /** Claude Code's archives only: the project key it was captured under. */
  projectKey?: string;
  /** The chunked archive's own size: what the row holds. */
  blobSizeBytes: number;
  /**
   * What storing it added: the chunks and payloads its blob store did not hold before (new to
   * its owner, for one owner's view), plus the chunked archive itself.
   */
  storedBytes: number;
  /** Chunks the files were cut into, and payloads taken out of them (before deduplication). */
  chunks: number;
  payloads: number;
}

/** Where a session is stored as chunks, and whether its images and documents are taken out. */
export interface ChunkStoreOptions {
  /** The content store chunks and payloads go to (a blob store, or one owner's view of one). */
  blobs: ContentStore;
  /** Store image and document payloads apart, once each; default true. */
  externalizePayloads?: boolean;
  signal?: AbortSignal;
}

/**
 * Stores the files of a session (`manifest`'s files, their bytes in `contents`, in order) as
 * chunks and payloads in `blobs`, then makes the chunked archive that stands for the `form` it
 * is assembled back into, compressed with `codec`. Every blob is stored (durable) before the
 * chunked archive exists, so a row that holds it never references a blob not yet there. Null when
 * the manifest would be larger than what it stands for (a session of a few lines): no stored blob
 * may decompress past the raw size it is recorded with (decompression and garbage collection are
 * bounded by it), so the caller keeps such a session as one archive; what was stored for it is
 * referenced by nothing and left to garbage collection.
 */
export async function storeChunkedArchive(
  manifest: SessionArchiveManifest,
  contents: readonly Uint8Array[],
  assembled: Omit<AssembledForm, "rawSizeBytes">,
  options: ChunkStoreOptions,
): Promise<ChunkedSessionBlob | null> {
  const { signal } = options;
  const stored = await storeSessionFiles(
    manifest.files.map((entry, index) => ({ entry, bytes: contents[index]! })),
    { content: options.blobs, payloads: options.externalizePayloads ?? true, ...(signal ? { signal } : {}) },
  );
  const rawSizeBytes = assembledSizeOf(assembled.form, manifest);
  const chunked: ChunkedSessionManifest = {
    format: "stowage-session",
    version: CHUNKED_FORMAT_VERSION,
    agent: manifest.agent,
    ...(manifest.agentVersion === undefined ? {} : { agentVersion: manifest.agentVersion }),
    sessionId: manifest.sessionId,
    ...(manifest.projectKey === undefined ? {} : { projectKey: manifest.projectKey }),
    capturedAt: manifest.capturedAt,
    assembled: { form: assembled.form, codec: assembled.codec, rawSizeBytes },
    chunkCodec: CHUNK_CODEC,
    files: stored.files,
  };
  const body = encodeChunkedBody(chunked);
  if (body.byteLength > rawSizeBytes) return null;
  const codec: SessionCodec = assembled.codec;
  const blob = await compressChunks(codec, [body], {
    sizeHint: body.byteLength,
    brotliQuality: BROTLI_QUALITY_BY_AGENT[manifest.agent],
    ...(signal ? { signal } : {}),
  });
  return {
    agent: manifest.agent,
    sessionId: manifest.sessionId,
    ...(manifest.projectKey === undefined ? {} : { projectKey: manifest.projectKey }),
    codec,
    blob,
    rawSizeBytes,
    blobSizeBytes: blob.byteLength,
    storedBytes: stored.storedBytes + blob.byteLength,
    chunks: stored.chunks,
    payloads: stored.payloads,
  };
}
