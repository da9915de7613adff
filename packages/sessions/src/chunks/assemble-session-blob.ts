import type { ContentStore } from "@stowage/core";
import { fromSystemError } from "@stowage/core";
import { DEFAULT_MAX_SESSION_BYTES } from "../archive/manifest.js";
import {
  assertPositiveInteger,
  assertSessionArchive,
  type SessionArchive,
} from "../archive/session-archive.js";
import { readChunkedManifest } from "../archive/session-archive-reader.js";
import { BROTLI_QUALITY_BY_AGENT } from "../codec/codecs.js";
import { compressChunks } from "../codec/compress.js";
import { assembledBytes } from "./assemble-chunks.js";

export interface AssembleSessionBlobOptions {
  /** Where the chunked archive's chunks and payloads are. */
  blobs: ContentStore;
  /** Cap on the assembled size. Default 256 MiB. */
  maxBytes?: number;
  signal?: AbortSignal;
}

/**
 * The whole blob a chunked archive stands for, assembled from `blobs`: the Stowage archive, or
 * the compatibility format's gzipped JSONL transcript, that was captured or sent, compressed with
 * its codec again (so not the same bytes, but the same files, each checked against its sha256
 * as it is rebuilt). What a caller who asks for the design document's wire format gets. Any other
 * blob is returned as it is. INTEGRITY (`MISSING_BLOB`, the ref in `details.ref`) when a chunk or
 * payload is gone.
 */
export async function assembleSessionBlob<T extends SessionArchive>(
  archive: T,
  options: AssembleSessionBlobOptions,
): Promise<T & { blobSizeBytes: number }> {
  assertSessionArchive(archive, Number.MAX_SAFE_INTEGER);
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_SESSION_BYTES;
  assertPositiveInteger(maxBytes, "maxBytes");
  const { signal } = options;
  try {
    const manifest = await readChunkedManifest(archive, { maxBytes, ...(signal ? { signal } : {}) });
    if (!manifest) return { ...archive, blobSizeBytes: archive.blob.byteLength };
    const { codec, rawSizeBytes } = manifest.assembled;
    const blob = await compressChunks(
      codec,
      assembledBytes(manifest, options.blobs, { verify: true, ...(signal ? { signal } : {}) }),
      {
        sizeHint: rawSizeBytes,
        brotliQuality: BROTLI_QUALITY_BY_AGENT[manifest.agent],
        ...(signal ? { signal } : {}),
      },
    );
    return { ...archive, codec, blob, rawSizeBytes, blobSizeBytes: blob.byteLength };
  } catch (err) {
    throw fromSystemError(err, `assemble session blob ${archive.sessionId}`);
  }
}
