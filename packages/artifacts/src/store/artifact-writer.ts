import type { FileHandle } from "node:fs/promises";
import { open, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { fromSystemError, StowageError, throwIfAborted } from "@stowage/core";
import type { OpenedDirectory } from "@stowage/core/fs";
import { fsyncDirectory } from "@stowage/core/fs";
import { artifactFileName, PARTIAL_SUFFIX } from "../layout/names.js";

/** Buffers handed to one `writev` call: below IOV_MAX (1,024 on Linux) with room to spare. */
const MAX_BUFFERS_PER_WRITE = 512;

/** A tool output being written: `<id>.<toolType>.log.partial` until `publish()` renames it. */
export interface ArtifactWriter {
  /** The artifact id (`"0"`, `"1"`, …), already unique across processes. */
  readonly id: string;
  /** The sanitized tool type in the file name. */
  readonly toolType: string;
  /** Where the complete artifact lives once published. */
  readonly path: string;
  /** Bytes written so far. */
  readonly bytesWritten: number;
  /** Appends `chunks` in order; the chunks must not change until the promise settles. */
  write(chunks: Uint8Array | readonly Uint8Array[], options?: { signal?: AbortSignal }): Promise<void>;
  /**
   * Closes the file and renames it to its final name, so that readers see it as complete. On
   * failure the partial file is removed and the error is thrown.
   */
  publish(options?: { signal?: AbortSignal }): Promise<void>;
  /** Closes the file and removes it; never throws. Does nothing once published or abandoned. */
  abandon(): Promise<void>;
}

async function writeAll(handle: FileHandle, chunks: readonly Uint8Array[]): Promise<number> {
  let pending = chunks.filter((chunk) => chunk.byteLength > 0);
  let written = 0;
  while (pending.length > 0) {
    const batch = pending.length > MAX_BUFFERS_PER_WRITE ? pending.slice(0, MAX_BUFFERS_PER_WRITE) : pending;
    let { bytesWritten } = await handle.writev(batch);
    if (bytesWritten === 0) throw new StowageError("UNAVAILABLE", "the file system accepted no bytes");
    written += bytesWritten;
    // A short write (rare on regular files, e.g. right before ENOSPC): resume where it stopped.
    let done = 0;
    while (done < batch.length && bytesWritten >= batch[done]!.byteLength) {
      bytesWritten -= batch[done]!.byteLength;
      done++;
    }
    const rest = pending.slice(done);
    if (bytesWritten > 0) rest[0] = rest[0]!.subarray(bytesWritten);
    pending = rest;
  }
  return written;
}

class FileArtifactWriter implements ArtifactWriter {
  readonly id: string;
  readonly toolType: string;
  readonly path: string;
  /** The artifacts directory, held open until the writer is done: renames happen inside it. */
  readonly #directory: OpenedDirectory;
  readonly #finalPath: string;
  readonly #partialPath: string;
  readonly #fsync: boolean;
  #handle: FileHandle | undefined;
  #state: "open" | "published" | "abandoned" = "open";
  #bytesWritten = 0;

  constructor(
    directory: OpenedDirectory,
    displayDir: string,
    id: number,
    toolType: string,
    handle: FileHandle,
    fsync: boolean,
  ) {
    this.id = String(id);
    this.toolType = toolType;
    this.#directory = directory;
    const name = artifactFileName(id, toolType);
    this.path = join(displayDir, name);
    this.#finalPath = `${directory.path}/${name}`;
    this.#partialPath = `${this.#finalPath}${PARTIAL_SUFFIX}`;
    this.#handle = handle;
    this.#fsync = fsync;
  }

  get bytesWritten(): number {
    return this.#bytesWritten;
  }

  #assertOpen(action: string): FileHandle {
    if (this.#state !== "open" || !this.#handle) {
      throw new StowageError(
        "CONFLICT",
        `cannot ${action} artifact ${this.id}: it is already ${this.#state}`,
        {
          reason: "WRITER_CLOSED",
        },
      );
    }
    return this.#handle;
  }

  async write(
    chunks: Uint8Array | readonly Uint8Array[],
    options: { signal?: AbortSignal } = {},
  ): Promise<void> {
    const handle = this.#assertOpen("write");
    throwIfAborted(options.signal, `write artifact ${this.id}`);
    try {
      this.#bytesWritten += await writeAll(handle, chunks instanceof Uint8Array ? [chunks] : chunks);
    } catch (err) {
      throw fromSystemError(err, `write artifact ${this.id}`);
    }
  }

  async publish(options: { signal?: AbortSignal } = {}): Promise<void> {
    const handle = this.#assertOpen("publish");
    try {
      throwIfAborted(options.signal, `publish artifact ${this.id}`);
      if (this.#fsync) await handle.sync();
      this.#handle = undefined;
      await handle.close();
      await rename(this.#partialPath, this.#finalPath);
      this.#state = "published";
    } catch (err) {
      this.#handle ??= handle;
      await this.abandon();
      throw fromSystemError(err, `publish artifact ${this.id}`);
    }
    try {
      if (this.#fsync) await fsyncDirectory(this.#directory.path);
    } catch (err) {
      throw fromSystemError(err, `publish artifact ${this.id}`);
    } finally {
      this.#directory.close();
    }
  }

  async abandon(): Promise<void> {
    if (this.#state !== "open") return;
    this.#state = "abandoned";
    const handle = this.#handle;
    this.#handle = undefined;
    await handle?.close().catch(() => {});
    await rm(this.#partialPath, { force: true }).catch(() => {});
    this.#directory.close();
  }
}

/**
 * Creates `<id>.<toolType>.log.partial` exclusively in the open artifacts directory (the id is
 * already claimed; `wx` also refuses a symbolic link planted under that name) and returns a
 * writer for it, which takes over `directory` and closes it when done.
 */
export async function openArtifactWriter(
  directory: OpenedDirectory,
  displayDir: string,
  id: number,
  toolType: string,
  fsync: boolean,
): Promise<ArtifactWriter> {
  const partialPath = `${directory.path}/${artifactFileName(id, toolType)}${PARTIAL_SUFFIX}`;
  try {
    const handle = await open(partialPath, "wx", 0o644);
    return new FileArtifactWriter(directory, displayDir, id, toolType, handle, fsync);
  } catch (err) {
    directory.close();
    throw fromSystemError(err, `create artifact ${id}`);
  }
}
