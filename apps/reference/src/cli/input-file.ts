import { constants } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { errnoOf, StowageError } from "@stowage/core";
import { descriptorPath } from "@stowage/core/fs";
import { type CommandContext, resolvePath } from "./context.js";

/** Bytes read from an input file at a time. */
const READ_CHUNK_BYTES = 256 * 1024;

/**
 * O_NONBLOCK: a FIFO opens at once (then refused as not a file) instead of waiting for a writer.
 * O_NOCTTY: a terminal named as input never becomes the process's controlling terminal. No
 * O_NOFOLLOW: the CLI has no root, a link the user names is theirs to follow.
 */
const INPUT_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;

/** A file the user named, opened and checked before anything is stored. */
export interface InputFile {
  /** As the user wrote it, for messages. */
  given: string;
  path: string;
  size: number;
  /** Open from the check on: the bytes stored are this file's, and a read error names `given`. */
  handle: FileHandle;
}

/** The files of {@link inputFiles}, closed by `await using`. */
export interface InputFiles extends AsyncDisposable {
  files: InputFile[];
}

/**
 * INPUT_FILE_UNREADABLE, by the name the user gave: FORBIDDEN where the system refused access,
 * UNAVAILABLE where reading failed (EIO, a special file). Never a store's internal key.
 */
function unreadable(given: string, path: string, err: unknown): StowageError {
  const errno = errnoOf(err);
  const refused = errno === "EACCES" || errno === "EPERM";
  return new StowageError(
    refused ? "FORBIDDEN" : "UNAVAILABLE",
    `input file ${given} cannot be read (${errno ?? (err as Error)?.message ?? "error"})`,
    { cause: err, reason: "INPUT_FILE_UNREADABLE", details: { path } },
  );
}

/** Opens one named file and checks that it is a regular file. */
async function openInput(context: CommandContext, given: string): Promise<InputFile> {
  const path = resolvePath(context, given);
  let handle: FileHandle;
  try {
    handle = await open(path, INPUT_FLAGS);
  } catch (err) {
    const errno = errnoOf(err);
    if (errno === "ENOENT" || errno === "ENOTDIR") {
      throw new StowageError("NOT_FOUND", `input file ${given} does not exist (looked at ${path})`, {
        reason: "INPUT_FILE_MISSING",
        details: { path },
      });
    }
    throw unreadable(given, path, err);
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) {
      throw new StowageError("INVALID_INPUT", `input ${given} is not a file`, {
        reason: "INPUT_NOT_A_FILE",
        details: { path },
      });
    }
    return { given, path, size: info.size, handle };
  } catch (err) {
    await handle.close();
    throw StowageError.is(err) ? err : unreadable(given, path, err);
  }
}

/**
 * Opens the files a user named: a missing or unreadable one fails first, by the name the user
 * gave (NOT_FOUND, reason `INPUT_FILE_MISSING`; FORBIDDEN or UNAVAILABLE, reason
 * `INPUT_FILE_UNREADABLE`; a directory is INVALID_INPUT), before any byte is stored, so that the
 * error never names a store's internal key. The files stay open until the result is disposed.
 */
export async function inputFiles(context: CommandContext, given: readonly string[]): Promise<InputFiles> {
  const files: InputFile[] = [];
  const close = () => Promise.all(files.map((file) => file.handle.close().catch(() => {})));
  try {
    for (const name of given) files.push(await openInput(context, name));
  } catch (err) {
    await close();
    throw err;
  }
  return {
    files,
    async [Symbol.asyncDispose]() {
      await close();
    },
  };
}

/**
 * A path that opens the very file that was opened and checked, for an API that takes a path
 * (`uploadFile`): `/proc/self/fd/<fd>` on Linux, so that a path renamed or swapped for a link since
 * changes nothing; the resolved path elsewhere.
 */
export function openedInputPath(file: InputFile): string {
  return descriptorPath(file.handle.fd, file.path);
}

/**
 * The bytes of an opened input file, as a web stream read from its handle. A read that fails
 * (EIO from `/proc/self/mem`, a file made unreadable underneath) errors the stream with
 * INPUT_FILE_UNREADABLE naming the user's path, which a store passes on unchanged.
 */
export function readInputFile(file: InputFile): ReadableStream<Uint8Array> {
  let position = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const buffer = new Uint8Array(READ_CHUNK_BYTES);
      let bytesRead: number;
      try {
        ({ bytesRead } = await file.handle.read(buffer, 0, buffer.byteLength, position));
      } catch (err) {
        controller.error(unreadable(file.given, file.path, err));
        return;
      }
      if (bytesRead === 0) {
        controller.close();
        return;
      }
      position += bytesRead;
      controller.enqueue(buffer.subarray(0, bytesRead));
    },
  });
}
