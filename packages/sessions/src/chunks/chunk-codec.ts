import { promisify } from "node:util";
import zlib from "node:zlib";
import { StowageError } from "@stowage/core";
import { DEFAULT_BROTLI_WINDOW_BITS } from "../codec/codecs.js";

const brotliCompress = promisify(zlib.brotliCompress);
const brotliDecompress = promisify(zlib.brotliDecompress);

/**
 * Brotli quality of a chunk. Each chunk is compressed on its own in Node's thread pool, so a
 * capture compresses on every core at once; the same bytes compress to the same blob (brotli is
 * deterministic for one quality, window and size), which is what lets a chunk be stored once.
 * 3, not a capture's 4: a follow-up in a new process (the CLI) compresses all its chunks again to
 * learn their refs (one process remembers them: remembered-chunks.ts), and at 3 ten growing
 * captures took 0.96–1.12× the time of one archive each (1.41–1.49× at 4) for 2% more bytes
 * stored (bench/follow-up-captures.ts). Changing it changes every chunk's ref once.
 */
const CHUNK_BROTLI_QUALITY = 3;

const asUint8Array = (buffer: Buffer) => new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);

/** A chunk's bytes compressed as it is stored. */
export async function compressChunk(bytes: Uint8Array): Promise<Uint8Array> {
  const { constants } = zlib;
  return asUint8Array(
    await brotliCompress(bytes, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: CHUNK_BROTLI_QUALITY,
        [constants.BROTLI_PARAM_LGWIN]: DEFAULT_BROTLI_WINDOW_BITS,
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        [constants.BROTLI_PARAM_SIZE_HINT]: bytes.byteLength,
      },
    }),
  );
}

/** A stored chunk decompressed: exactly `size` bytes, or INTEGRITY (`CORRUPT_CHUNK`) naming its ref. */
export async function decompressChunk(stored: Uint8Array, size: number, ref: string): Promise<Uint8Array> {
  let bytes: Buffer;
  try {
    // One byte more than recorded: a chunk that holds more is told apart from one that fits.
    bytes = await brotliDecompress(stored, { maxOutputLength: size + 1 });
  } catch (err) {
    throw new StowageError("INTEGRITY", `session chunk ${ref} does not decompress`, {
      cause: err,
      reason: "CORRUPT_CHUNK",
      details: { ref },
    });
  }
  if (bytes.byteLength !== size) {
    throw new StowageError(
      "INTEGRITY",
      `session chunk ${ref} decompresses to ${bytes.byteLength} bytes, not the ${size} its manifest says`,
      { reason: "CORRUPT_CHUNK", details: { ref } },
    );
  }
  return asUint8Array(bytes);
}
