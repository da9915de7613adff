import { createHash } from "node:crypto";
import type { FileHandle } from "node:fs/promises";
import { StowageError, throwIfAborted } from "@stowage/core";

/** Where an upload stands: bytes handed to the network so far, out of the file's size. */
export interface UploadProgress {
  filename: string;
  sentBytes: number;
  totalBytes: number;
}

/** Bytes read from disk per step: the most of the file held in memory at once, per reader. */
const FILE_CHUNK_BYTES = 256 * 1024;

function fileShrank(bytes: number): StowageError {
  return new StowageError("CONFLICT", `the file shrank to ${bytes} bytes while it was read`, {
    reason: "FILE_CHANGED",
  });
}

/**
 * Reads the first `size` bytes of an open file and hands them to `write` one chunk at a time,
 * through two buffers that are reused: the next chunk is read while the previous one is being
 * written, and a buffer is read into again only once `write` has resolved for it. So `write` must
 * resolve only when it is done with the chunk (hashed, or flushed to the socket); then the whole
 * file costs two chunks of memory and leaves no garbage behind.
 */
export async function pipeFile(
  handle: FileHandle,
  size: number,
  write: (chunk: Uint8Array) => Promise<void> | void,
  signal?: AbortSignal,
): Promise<void> {
  const buffers = [new Uint8Array(FILE_CHUNK_BYTES), new Uint8Array(FILE_CHUNK_BYTES)];
  let writing: Promise<void> = Promise.resolve();
  for (let read = 0, turn = 0; read < size; turn++) {
    throwIfAborted(signal, "read the file");
    const buffer = buffers[turn % 2]!;
    const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.byteLength, size - read), read);
    if (bytesRead === 0) throw fileShrank(read);
    read += bytesRead;
    await writing;
    writing = Promise.resolve(write(buffer.subarray(0, bytesRead)));
    // Surfaces a failed write now rather than after the next read; awaited again before reuse.
    writing.catch(() => {});
  }
  await writing;
}

/** Hex SHA-256 of the first `size` bytes of an open file, read through {@link pipeFile}. */
export async function sha256OfFile(handle: FileHandle, size: number, signal?: AbortSignal): Promise<string> {
  const hash = createHash("sha256");
  await pipeFile(handle, size, (chunk) => void hash.update(chunk), signal);
  return hash.digest("hex");
}

/** Who hears about progress, if anyone. */
export interface ProgressListener {
  filename: string;
  onProgress: (progress: UploadProgress) => void;
}

/**
 * The first `size` bytes of an open file as a stream, read from disk one chunk at a time as the
 * consumer pulls, for a caller's own `fetch`. Each chunk is a new buffer (the stream cannot know
 * when its consumer is done with one), so memory is bounded by the garbage collector's pace;
 * {@link pipeFile} reuses its buffers instead.
 * With a listener, reports once at 0 and after each chunk; errors the listener throws are
 * ignored (a broken progress display must not break the upload). A file that shrank under the
 * reader fails the stream with CONFLICT.
 */
export function fileBody(
  handle: FileHandle,
  size: number,
  listener?: ProgressListener,
): ReadableStream<Uint8Array> {
  let sent = 0;
  const tell = () => {
    try {
      listener?.onProgress({ filename: listener.filename, sentBytes: sent, totalBytes: size });
    } catch {
      // Ignored, see above.
    }
  };
  return new ReadableStream<Uint8Array>({
    start: tell,
    async pull(controller) {
      if (sent >= size) return controller.close();
      const chunk = new Uint8Array(Math.min(FILE_CHUNK_BYTES, size - sent));
      const { bytesRead } = await handle.read(chunk, 0, chunk.byteLength, sent);
      if (bytesRead === 0) {
        controller.error(fileShrank(sent));
        return;
      }
      sent += bytesRead;
      controller.enqueue(bytesRead === chunk.byteLength ? chunk : chunk.subarray(0, bytesRead));
      tell();
    },
  });
}
