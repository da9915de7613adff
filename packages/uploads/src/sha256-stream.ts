import { createHash } from "node:crypto";
import { isReadableStream, throwIfAborted } from "@stowage/core";

/** The chunks of a web stream, one at a time; the stream is cancelled if the reader stops early. */
async function* chunksOf(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader();
  let done = false;
  try {
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) yield chunk.value;
    done = true;
  } finally {
    if (!done) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}

/**
 * Hex SHA-256 of everything `source` yields (a web stream or a Node readable), read chunk by
 * chunk: memory holds one chunk at a time, whatever the size.
 */
export async function sha256OfStream(
  source: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>,
  signal?: AbortSignal,
): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of isReadableStream(source) ? chunksOf(source) : source) {
    throwIfAborted(signal, "sha256");
    hash.update(chunk);
  }
  return hash.digest("hex");
}
