import { StowageError, throwIfAborted } from "@stowage/core";

/**
 * Cuts a byte stream into parts of exactly `partSize` bytes (the last one shorter), holding at
 * most one part in memory. S3 needs the length of a request before it starts, so a stream of
 * unknown length is sent part by part.
 */
export interface PartReader {
  /** The next part, or null when the stream is exhausted. */
  next(): Promise<Uint8Array | null>;
  /** True once the stream has ended and every byte was returned by `next`. */
  readonly finished: boolean;
  /**
   * The rest of the stream, `before` first, as a new stream; fails with TOO_LARGE once it
   * carries more than `maxBytes`. The reader must not be used afterwards.
   */
  remaining(before: Uint8Array, maxBytes: number): ReadableStream<Uint8Array>;
  /** Stops reading and cancels the source stream. */
  cancel(reason?: unknown): Promise<void>;
}

/** A {@link PartReader} over `stream`; `context` (e.g. `s3 put "k"`) starts its error messages. */
export function createPartReader(
  stream: ReadableStream<Uint8Array>,
  partSize: number,
  signal: AbortSignal | undefined,
  context: string,
): PartReader {
  const reader = stream.getReader();
  let leftover: Uint8Array | undefined;
  let done = false;

  async function read(): Promise<Uint8Array | undefined> {
    throwIfAborted(signal, context);
    const result = await reader.read();
    throwIfAborted(signal, context);
    if (result.done) {
      done = true;
      return undefined;
    }
    if (!(result.value instanceof Uint8Array)) {
      throw new StowageError("INVALID_INPUT", `${context}: stream chunks must be Uint8Array`);
    }
    return result.value;
  }

  async function next(): Promise<Uint8Array | null> {
    const chunks: Uint8Array[] = [];
    let total = 0;
    if (leftover) {
      chunks.push(leftover);
      total = leftover.byteLength;
      leftover = undefined;
    }
    while (total < partSize && !done) {
      const chunk = await read();
      if (chunk && chunk.byteLength > 0) {
        chunks.push(chunk);
        total += chunk.byteLength;
      }
    }
    if (total > partSize) {
      const last = chunks.pop()!;
      const keep = last.byteLength - (total - partSize);
      chunks.push(last.subarray(0, keep));
      leftover = last.subarray(keep);
      total = partSize;
    } else if (total === partSize && !done) {
      // Look one chunk ahead so that a stream of exactly one part is known to be finished.
      const ahead = await read();
      if (ahead && ahead.byteLength > 0) leftover = ahead;
    }
    if (total === 0) return null;
    // Copied, never a view: the caller's buffers may be reused once their chunk was read.
    const part = new Uint8Array(total);
    let offset = 0;
    for (const chunk of chunks) {
      part.set(chunk, offset);
      offset += chunk.byteLength;
    }
    return part;
  }

  function remaining(before: Uint8Array, maxBytes: number): ReadableStream<Uint8Array> {
    const queued = [before, ...(leftover ? [leftover] : [])];
    leftover = undefined;
    let sent = 0;
    return new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const chunk = queued.shift() ?? (done ? undefined : await read());
          if (chunk === undefined) {
            controller.close();
            return;
          }
          sent += chunk.byteLength;
          if (sent > maxBytes) {
            throw new StowageError("TOO_LARGE", `${context}: body is larger than ${maxBytes} bytes`, {
              details: { limit: maxBytes },
            });
          }
          controller.enqueue(chunk);
        } catch (err) {
          // An errored stream never calls `cancel`, so the source is released here.
          await reader.cancel(err).catch(() => {});
          throw err;
        }
      },
      async cancel(reason) {
        await reader.cancel(reason).catch(() => {});
      },
    });
  }

  return {
    next,
    get finished() {
      return done && leftover === undefined;
    },
    remaining,
    async cancel(reason) {
      await reader.cancel(reason).catch(() => {});
    },
  };
}
