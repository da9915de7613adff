import type { Transform } from "node:stream";
import zlib from "node:zlib";
import { describeValue, StowageError } from "@stowage/core";

/** Every codec tag a session blob can carry. The tag is stored with the blob; reading never guesses. */
export const SESSION_CODECS = ["gzip", "brotli", "zstd"] as const;

export type SessionCodec = (typeof SESSION_CODECS)[number];

/**
 * The codec captures use unless told otherwise. Measured on a 12 MB Claude Code session tree on
 * Node 20 (see the README): brotli at quality 4 is 4–5% smaller than gzip-6 and 1.5–2.2× faster.
 * zstd is not the default even where `node:zlib` has it, because Node 20 readers could not open it.
 */
export const DEFAULT_SESSION_CODEC: SessionCodec = "brotli";
/** Brotli quality for captures: the measured sweet spot (q5+ is no faster than gzip-6). */
export const DEFAULT_BROTLI_QUALITY = 4;
/**
 * Brotli quality per agent, each measured against gzip-6 on its own sessions (`pnpm bench`):
 * Claude Code trees at 4 (0.961× gzip-6's size, faster); Codex rollouts (real lines) at 3, as
 * small as at 4 (0.894× vs 0.889×) in half the time; OpenCode's indented export JSON at 5, where
 * 4 is 12% larger than gzip-6 and 5 is 5% smaller, still faster than gzip-6.
 */
export const BROTLI_QUALITY_BY_AGENT = { "claude-code": 4, codex: 3, opencode: 5 } as const;
/**
 * Brotli window for captures, as log2 bytes (256 KiB). Measured against the default 4 MiB window:
 * 0.5% larger output, and faster on a busy machine, where the smaller working set stays in cache.
 */
export const DEFAULT_BROTLI_WINDOW_BITS = 18;
/** gzip level for captures with the `gzip` codec, the level existing container protocols use. */
const DEFAULT_GZIP_LEVEL = 6;
/** zstd level for captures with the `zstd` codec (zstd's own default). */
const DEFAULT_ZSTD_LEVEL = 3;
/**
 * Output chunk size of the decompressors, and the least of a compressor's; larger than zlib's
 * 16 KiB to cut per-chunk overhead.
 */
export const CODEC_CHUNK_BYTES = 64 * 1024;
/**
 * Largest output chunk of a compressor given the input's size. Each output chunk is one trip
 * between the thread pool, where node:zlib compresses, and the event loop; a 12 MB capture in
 * 64 KiB chunks made 46 of them, and on a loaded machine each waits to be scheduled (measured:
 * 1.08x faster in 1 MiB chunks, 1.14x in 4 MiB, interleaved, load 4-5 on 2 cores).
 */
const MAX_COMPRESS_CHUNK_BYTES = 4 * 1024 * 1024;

/**
 * The output chunk for compressing `sizeHint` bytes: about a quarter of the input (what brotli
 * and gzip leave of session JSONL), so one or two trips, between {@link CODEC_CHUNK_BYTES} and
 * 4 MiB.
 */
function compressChunkBytes(sizeHint: number | undefined): number {
  if (sizeHint === undefined) return CODEC_CHUNK_BYTES;
  return Math.min(MAX_COMPRESS_CHUNK_BYTES, Math.max(CODEC_CHUNK_BYTES, Math.ceil(sizeHint / 4)));
}

// Node 22.15 / 23.8 added zstd to node:zlib; @types/node 20 does not know it.
interface ZstdZlib {
  createZstdCompress(options?: { params?: Record<number, number>; chunkSize?: number }): Transform;
  createZstdDecompress(options?: { chunkSize?: number }): Transform;
  constants: { ZSTD_c_compressionLevel: number; ZSTD_c_pledgedSrcSize?: number };
}

function zstdZlib(): ZstdZlib | undefined {
  const candidate = zlib as unknown as Partial<ZstdZlib> & { zstdCompress?: unknown };
  return typeof candidate.zstdCompress === "function" && typeof candidate.createZstdCompress === "function"
    ? (candidate as ZstdZlib)
    : undefined;
}

/** True when `value` is a known codec tag. */
export function isSessionCodec(value: unknown): value is SessionCodec {
  return typeof value === "string" && (SESSION_CODECS as readonly string[]).includes(value);
}

/** Throws INVALID_INPUT unless `value` is a known codec tag. */
export function assertSessionCodec(value: unknown, what = "codec"): asserts value is SessionCodec {
  if (!isSessionCodec(value)) {
    throw new StowageError(
      "INVALID_INPUT",
      `${what} must be one of ${SESSION_CODECS.map((codec) => `"${codec}"`).join(", ")}, got ${describeValue(value)}`,
    );
  }
}

/** True when this Node.js can (de)compress `codec`: gzip and brotli always, zstd from Node 22.15. */
export function isCodecAvailable(codec: SessionCodec): boolean {
  return codec !== "zstd" || zstdZlib() !== undefined;
}

/** The codecs this Node.js supports, in {@link SESSION_CODECS} order. */
export function availableCodecs(): SessionCodec[] {
  return SESSION_CODECS.filter(isCodecAvailable);
}

function assertAvailable(codec: unknown): asserts codec is SessionCodec {
  assertSessionCodec(codec);
  if (!isCodecAvailable(codec)) {
    throw new StowageError(
      "UNAVAILABLE",
      `codec "${codec}" needs node:zlib zstd support (Node.js 22.15 or later); this is Node.js ${process.versions.node}`,
      { reason: "CODEC_UNAVAILABLE", details: { codec } },
    );
  }
}

/**
 * A compressor for `codec`; `sizeHint` (the input size, when known) lets brotli and zstd tune;
 * `brotliQuality` defaults to {@link DEFAULT_BROTLI_QUALITY}.
 */
export function createCompressStream(
  codec: SessionCodec,
  sizeHint?: number,
  brotliQuality = DEFAULT_BROTLI_QUALITY,
): Transform {
  assertAvailable(codec);
  const chunkSize = compressChunkBytes(sizeHint);
  if (codec === "gzip") return zlib.createGzip({ level: DEFAULT_GZIP_LEVEL, chunkSize });
  if (codec === "brotli") {
    const { constants } = zlib;
    return zlib.createBrotliCompress({
      chunkSize,
      params: {
        [constants.BROTLI_PARAM_QUALITY]: brotliQuality,
        [constants.BROTLI_PARAM_LGWIN]: DEFAULT_BROTLI_WINDOW_BITS,
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        ...(sizeHint === undefined ? {} : { [constants.BROTLI_PARAM_SIZE_HINT]: sizeHint }),
      },
    });
  }
  const zstd = zstdZlib()!;
  return zstd.createZstdCompress({
    chunkSize,
    params: { [zstd.constants.ZSTD_c_compressionLevel]: DEFAULT_ZSTD_LEVEL },
  });
}

/** A decompressor for `codec`. */
export function createDecompressStream(codec: SessionCodec): Transform {
  assertAvailable(codec);
  if (codec === "gzip") return zlib.createGunzip({ chunkSize: CODEC_CHUNK_BYTES });
  if (codec === "brotli") return zlib.createBrotliDecompress({ chunkSize: CODEC_CHUNK_BYTES });
  return zstdZlib()!.createZstdDecompress({ chunkSize: CODEC_CHUNK_BYTES });
}
