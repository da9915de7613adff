import { randomBytes } from "node:crypto";
import { lstat, rename } from "node:fs/promises";
import { dirname, join } from "node:path";
import {
  consoleLogger,
  describeValue,
  errnoOf,
  fromSystemError,
  type Logger,
  StowageError,
} from "@stowage/core";
import { ensureDirectory, TEMP_FILE_PREFIX } from "@stowage/core/fs";
import { PARTIAL_SUFFIX } from "../layout/names.js";
import { removeTreeAt } from "../layout/remove-tree.js";
import { copyTree } from "./copy-tree.js";
import { checkDirectoryPath, isInside } from "./paths.js";

export interface ForkArtifactsOptions {
  /** Receives each warning too. Default `consoleLogger`. */
  logger?: Logger;
  signal?: AbortSignal;
}

export interface ForkArtifactsResult {
  /** False when there was no source directory (nothing to fork) or it could not be copied. */
  forked: boolean;
  linkedFiles: number;
  copiedFiles: number;
  /** Problems that did not stop the fork: entries that could not be copied, a destination in the way. */
  warnings: string[];
}

/**
 * Copies a session's artifacts directory to a forked session's (`toDir`, which should not
 * exist yet): files are hard-linked where the file system allows (artifacts are never modified
 * once published, so sharing inodes is safe) and copied otherwise. A missing source is no fork
 * and no error; any other problem is a warning and the fork completes with what could be
 * copied. Outputs still being written are left out. The copy is assembled in a temp directory
 * and renamed into place, so `toDir` never holds half a fork. Ids in the fork continue after
 * the copied ones (their claims are copied too).
 */
export async function forkArtifacts(
  fromDir: string,
  toDir: string,
  options: ForkArtifactsOptions = {},
): Promise<ForkArtifactsResult> {
  const from = checkDirectoryPath(fromDir, "fork source directory");
  const to = checkDirectoryPath(toDir, "fork destination directory");
  if (isInside(from, to) || isInside(to, from)) {
    throw new StowageError(
      "INVALID_INPUT",
      `fork source and destination must not contain each other, got ${describeValue(from)} and ${describeValue(to)}`,
    );
  }
  const logger = options.logger ?? consoleLogger;
  const result: ForkArtifactsResult = { forked: false, linkedFiles: 0, copiedFiles: 0, warnings: [] };
  const warn = (message: string) => {
    result.warnings.push(message);
    logger.warn(`fork artifacts: ${message}`);
  };

  try {
    const info = await lstat(from);
    if (!info.isDirectory()) {
      warn(`${from} is not a directory; nothing was copied`);
      return result;
    }
  } catch (err) {
    if (errnoOf(err) !== "ENOENT") warn(`cannot read ${from}: ${fromSystemError(err, "stat").message}`);
    return result;
  }

  const temp = join(dirname(to), `${TEMP_FILE_PREFIX}fork-${randomBytes(6).toString("hex")}`);
  try {
    await ensureDirectory(dirname(to));
    const copied = await copyTree(from, temp, {
      link: true,
      fsync: false,
      skip: (name) => {
        if (name.startsWith(TEMP_FILE_PREFIX)) return ""; // another process's write in progress: not ours to copy
        if (name.endsWith(PARTIAL_SUFFIX)) return "it is still being written";
        return undefined;
      },
      onSkip: (path, why) => warn(`${path} was not copied: ${why}`),
      onError: (error) => warn(error.message),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    await rename(temp, to);
    result.forked = true;
    result.linkedFiles = copied.linkedFiles;
    result.copiedFiles = copied.copiedFiles;
  } catch (err) {
    if (StowageError.is(err, "ABORTED")) {
      await removeTreeAt(temp).catch(() => {});
      throw err;
    }
    const errno = errnoOf(err);
    const why =
      errno === "ENOTEMPTY" || errno === "EEXIST" || errno === "ENOTDIR"
        ? `${to} already exists and is not an empty directory`
        : fromSystemError(err, `fork into ${to}`).message;
    warn(`nothing was copied: ${why}`);
    await removeTreeAt(temp).catch(() => {});
  }
  return result;
}
