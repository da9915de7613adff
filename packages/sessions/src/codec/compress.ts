import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { concatBytes, StowageError, throwIfAborted } from "@stowage/core";
import {
  CODEC_CHUNK_BYTES,
  createCompressStream,
  createDecompressStream,
  type SessionCodec,
} from "./codecs.js";

function* slices(bytes: Uint8Array): Generator<Uint8Array> {
  for (let offset = 0; offset < bytes.byteLength; offset += CODEC_CHUNK_BYTES) {
    yield bytes.subarray(offset, Math.min(bytes.byteLength, offset + CODEC_CHUNK_BYTES));
  }
}

const asUint8Array = (chunk: Buffer) => new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);

/** Compresses `chunks` (in order, as they come) with `codec` into one blob. */
export async function compressChunks(
  codec: SessionCodec,
  chunks: Iterable<Uint8Array> | AsyncIterable<Uint8Array>,
  options: { sizeHint?: number; brotliQuality?: number; signal?: AbortSignal } = {},
): Promise<Uint8Array> {
  const { signal } = options;
  throwIfAborted(signal, `compress (${codec})`);
  const compressor = createCompressStream(codec, options.sizeHint, options.brotliQuality);
  const output: Uint8Array[] = [];
  let size = 0;
  try {
    await pipeline(
      Readable.from(chunks),
      compressor,
      async (source: AsyncIterable<Buffer>) => {
        for await (const chunk of source) {
          output.push(asUint8Array(chunk));
          size += chunk.byteLength;
        }
      },
      ...(signal ? [{ signal }] : []),
    );
  } catch (err) {
    throwIfAborted(signal, `compress (${codec})`);
    // What the chunks' source threw (a blob missing from a store while it is assembled) is its own.
    if (StowageError.is(err)) throw err;
    throw new StowageError("INTERNAL", `compress (${codec}) failed: ${String(err)}`, { cause: err });
  }
  return concatBytes(output, size);
}

export interface DecompressOptions {
  /** Fail with TOO_LARGE once more than this many bytes come out. */
  maxBytes: number;
  /**
   * The decompressed size the blob was recorded with, when the output must match it exactly:
   * fail with INTEGRITY (reason `RAW_SIZE_MISMATCH`) as soon as more comes out. A small blob
   * that records a small size then costs its size to refuse, not `maxBytes` of decompression.
   */
  recordedBytes?: number;
  signal?: AbortSignal;
}

/**
 * Decompresses `blob` chunk by chunk, counting the output: a decompression bomb fails with
 * TOO_LARGE as soon as it passes `maxBytes`, having held at most a chunk or two in memory.
 * Data that is not valid `codec` data (corrupt, truncated, another codec) fails with INTEGRITY.
 */
export async function* decompressBounded(
  blob: Uint8Array,
  codec: SessionCodec,
  options: DecompressOptions,
): AsyncGenerator<Uint8Array> {
  const { maxBytes, recordedBytes, signal } = options;
  const context = `decompress (${codec})`;
  throwIfAborted(signal, context);
  const decompressor = createDecompressStream(codec);
  const feed = Readable.from(slices(blob));
  feed.on("error", (err) => decompressor.destroy(err));
  feed.pipe(decompressor);
  let total = 0;
  try {
    for await (const chunk of decompressor as AsyncIterable<Buffer>) {
      throwIfAborted(signal, context);
      total += chunk.byteLength;
      if (total > maxBytes) {
        throw new StowageError(
          "TOO_LARGE",
          `session blob decompresses to more than the limit of ${maxBytes} bytes (maxBytes); refusing it`,
          { reason: "DECOMPRESSED_TOO_LARGE", details: { limit: maxBytes, codec } },
        );
      }
      if (recordedBytes !== undefined && total > recordedBytes) {
        throw new StowageError(
          "INTEGRITY",
          `session blob decompresses to more than the ${recordedBytes} bytes it was recorded as; refusing it`,
          { reason: "RAW_SIZE_MISMATCH", details: { recorded: recordedBytes, codec } },
        );
      }
      yield asUint8Array(chunk);
    }
    // A decoder stops at the end of its data and ignores what follows (brotli anything, gzip
    // zeros): bytes after it would be stored and served as part of a verified blob.
    const consumed = (decompressor as unknown as { bytesWritten: number }).bytesWritten;
    if (consumed !== blob.byteLength) {
      throw new StowageError(
        "INTEGRITY",
        `session blob has ${blob.byteLength - consumed} bytes after its ${codec} data; refusing it`,
        { reason: "CORRUPT_BLOB", details: { codec, trailingBytes: blob.byteLength - consumed } },
      );
    }
  } catch (err) {
    if (StowageError.is(err)) throw err;
    throw new StowageError(
      "INTEGRITY",
      `session blob is not valid ${codec} data (corrupt, truncated, or written with another codec): ${
        err instanceof Error ? err.message : String(err)
      }`,
      { cause: err, reason: "CORRUPT_BLOB", details: { codec } },
    );
  } finally {
    feed.destroy();
    decompressor.destroy();
  }
}
