import { sha256Hex } from "@stowage/core";
import { compressChunk } from "./chunk-codec.js";

/**
 * Compressed chunks this process made for one content store, by the SHA-256 of their raw bytes,
 * so that a follow-up capture (or a stored blob cut into chunks) in the same process compresses
 * only its new chunks: a chunk's compressed bytes follow from its raw bytes alone (see
 * chunk-codec.ts), so a remembered one is what compressing it again would give. One memory per
 * content store (a principal's view of the blobs), never one per process: how fast a capture runs
 * must not tell whether another principal stored the same text. A process per capture (the CLI)
 * starts with nothing remembered.
 */
export interface ChunkMemory {
  /** `raw` compressed: remembered, or compressed now and remembered. */
  compress(raw: Uint8Array): Promise<Uint8Array>;
  /** Compressed bytes held now (at most the limit it was made with). */
  readonly bytes: number;
}

/** What one content store's memory may hold: some 2,000 chunks of a text transcript. */
const REMEMBERED_BYTES = 32 * 1024 * 1024;

/** A memory of at most `limitBytes` compressed bytes, least recently used out first. */
export function createChunkMemory(
  limitBytes: number,
  compress: (raw: Uint8Array) => Promise<Uint8Array> = compressChunk,
): ChunkMemory {
  const chunks = new Map<string, Uint8Array>();
  let bytes = 0;
  return {
    get bytes() {
      return bytes;
    },
    async compress(raw) {
      const hash = sha256Hex(raw);
      const known = chunks.get(hash);
      if (known) {
        chunks.delete(hash);
        chunks.set(hash, known);
        return known;
      }
      const compressed = await compress(raw);
      // Two captures may have compressed the same chunk at once: it is counted once.
      if (!chunks.has(hash) && compressed.byteLength <= limitBytes) {
        chunks.set(hash, compressed);
        bytes += compressed.byteLength;
        for (const [oldest, value] of chunks) {
          if (bytes <= limitBytes) break;
          chunks.delete(oldest);
          bytes -= value.byteLength;
        }
      }
      return compressed;
    },
  };
}

const memories = new WeakMap<object, ChunkMemory>();

/** The memory of chunks compressed for `content` in this process (made on first use). */
export function chunkMemoryOf(content: object): ChunkMemory {
  let memory = memories.get(content);
  if (!memory) {
    memory = createChunkMemory(REMEMBERED_BYTES);
    memories.set(content, memory);
  }
  return memory;
}
