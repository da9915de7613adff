import { abortedError, throwIfAborted } from "./abort.js";
import { StowageError } from "./errors.js";

/** Chunk size used when a byte array is served as a stream. */
export const DEFAULT_STREAM_CHUNK_BYTES = 64 * 1024;

export function isReadableStream(value: unknown): value is ReadableStream<Uint8Array> {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { getReader?: unknown }).getReader === "function" &&
    typeof (value as { pipeTo?: unknown }).pipeTo === "function"
  );
}

/** A stream that yields `bytes` in chunks; the chunks are views, so `bytes` must not change. */
export function bytesToStream(
  bytes: Uint8Array,
  chunkBytes = DEFAULT_STREAM_CHUNK_BYTES,
): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.byteLength) {
        controller.close();
        return;
      }
      const end = Math.min(offset + chunkBytes, bytes.byteLength);
      controller.enqueue(bytes.subarray(offset, end));
      offset = end;
    },
  });
}

/** Copy chunks into one array of `totalBytes` bytes. */
export function concatBytes(chunks: readonly Uint8Array[], totalBytes?: number): Uint8Array {
  const total = totalBytes ?? chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0);
  if (chunks.length === 1 && chunks[0]!.byteLength === total) return chunks[0]!;
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

export interface ReadStreamOptions {
  /** Fail with TOO_LARGE (and cancel the stream) once more than this many bytes arrive. */
  maxBytes?: number;
  signal?: AbortSignal;
}

/** Read a whole stream into memory, bounded by `maxBytes` and cancellable. */
export async function readStreamToBytes(
  stream: ReadableStream<Uint8Array>,
  options: ReadStreamOptions = {},
): Promise<Uint8Array> {
  const { maxBytes = Number.POSITIVE_INFINITY, signal } = options;
  throwIfAborted(signal, "read stream");
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  const onAbort = () => {
    reader.cancel(signal?.reason).catch(() => {});
  };
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (signal?.aborted) throw abortedError(signal, "read stream");
      if (done) break;
      if (!(value instanceof Uint8Array)) {
        throw new StowageError("INVALID_INPUT", "stream chunks must be Uint8Array");
      }
      total += value.byteLength;
      if (total > maxBytes) {
        throw new StowageError("TOO_LARGE", `stream is larger than the limit of ${maxBytes} bytes`, {
          details: { limit: maxBytes },
        });
      }
      chunks.push(value);
    }
    return concatBytes(chunks, total);
  } catch (err) {
    await reader.cancel(err).catch(() => {});
    if (signal?.aborted && !StowageError.is(err, "ABORTED")) throw abortedError(signal, "read stream");
    throw err;
  } finally {
    signal?.removeEventListener("abort", onAbort);
    reader.releaseLock();
  }
}
