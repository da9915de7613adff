import {
  BLOB_REF_PREFIX,
  describeValue,
  isReadableStream,
  StowageError,
  throwIfAborted,
} from "@stowage/core";

/** What {@link scanBytesForBlobRefs} reads: bytes, a web stream, or any async source of byte chunks (a Node stream). */
export type RefScanSource = Uint8Array | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

const REF_PATTERN = /blob:sha256:([a-f0-9]{64})/g;
// One character short of a whole ref: enough to catch a ref cut by a chunk boundary, too short
// to hold a whole ref that was already reported.
const CARRY_CHARS = BLOB_REF_PREFIX.length + 64 - 1;

function chunksOf(source: RefScanSource): AsyncIterable<Uint8Array> | Iterable<Uint8Array> {
  if (source instanceof Uint8Array) return [source];
  if (isReadableStream(source)) return source as unknown as AsyncIterable<Uint8Array>;
  if (typeof (source as AsyncIterable<Uint8Array>)?.[Symbol.asyncIterator] === "function") return source;
  throw new StowageError(
    "INVALID_INPUT",
    `a ref scan reads bytes, a ReadableStream or an async iterable of bytes, got ${describeValue(source)}`,
  );
}

/**
 * Yields the hash of every `blob:sha256:<hex>` ref in `source`, in order (a hash as often as it
 * appears), whatever the bytes around it are: JSON, JSONL, Markdown, a tool log, an archive of
 * such files. Refs cut by a chunk boundary are found. The source is read to its end; an error
 * while reading is thrown, never turned into "no refs", so a garbage collection fed by it stops.
 * Decompress first: refs inside gzip or brotli bytes are not visible.
 */
export async function* scanBytesForBlobRefs(
  source: RefScanSource,
  options: { signal?: AbortSignal } = {},
): AsyncGenerator<string> {
  let carry = "";
  for await (const chunk of chunksOf(source)) {
    throwIfAborted(options.signal, "scan for blob refs");
    if (!(chunk instanceof Uint8Array)) {
      throw new StowageError("INVALID_INPUT", `ref scan chunks must be bytes, got ${describeValue(chunk)}`);
    }
    // latin1 maps each byte to one character: refs are ASCII, and no byte sequence can fail.
    const text = carry + Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString("latin1");
    for (const match of text.matchAll(REF_PATTERN)) yield match[1]!;
    carry = text.slice(-CARRY_CHARS);
  }
}
