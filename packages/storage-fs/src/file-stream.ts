import type { FileHandle } from "node:fs/promises";

/** Bytes read per chunk when streaming a file. */
const FILE_STREAM_CHUNK_BYTES = 256 * 1024;

/**
 * A web stream over an open file; the handle is closed at the end, on error and on cancel. A read
 * error breaks the stream with the raw error, which `defineObjectStore` maps like any other.
 */
export function fileHandleToStream(handle: FileHandle): ReadableStream<Uint8Array> {
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await handle.close().catch(() => {});
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const buffer = new Uint8Array(FILE_STREAM_CHUNK_BYTES);
          const { bytesRead } = await handle.read(buffer, 0, buffer.byteLength, null);
          if (bytesRead === 0) {
            await close();
            controller.close();
            return;
          }
          controller.enqueue(bytesRead === buffer.byteLength ? buffer : buffer.subarray(0, bytesRead));
        } catch (err) {
          await close();
          controller.error(err);
        }
      },
      cancel: close,
    },
    { highWaterMark: 0 },
  );
}
