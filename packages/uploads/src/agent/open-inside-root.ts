import type { FileHandle } from "node:fs/promises";
import { realpath } from "node:fs/promises";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import { describeValue, StowageError } from "@stowage/core";
import { type OpenedDirectory, openDirectoryBeneath, openFileBeneath } from "@stowage/core/fs";

/** A file of the root, opened and checked: a regular file with no other name, inside the root. */
export interface OpenedInsideRoot {
  handle: FileHandle;
  /** Where it was opened: its path below the root's real path. */
  realPath: string;
  size: number;
}

function forbidden(filePath: string, what: string, reason: string, cause?: unknown): StowageError {
  return new StowageError("FORBIDDEN", `${describeValue(filePath)} ${what}`, {
    reason,
    ...(cause === undefined ? {} : { cause }),
  });
}

function invalidRoot(root: string, what: string, cause?: unknown): StowageError {
  return new StowageError("INVALID_INPUT", `root ${describeValue(root)} ${what}`, {
    reason: "INVALID_UPLOAD_ROOT",
    ...(cause === undefined ? {} : { cause }),
  });
}

/** The root held open, and its real path (read from the descriptor where the system names it). */
async function openRoot(root: string): Promise<{ directory: OpenedDirectory; realRoot: string }> {
  let directory: OpenedDirectory | null;
  try {
    directory = openDirectoryBeneath(root, []);
  } catch (err) {
    throw invalidRoot(root, "is not a directory that can be opened", err);
  }
  if (!directory) throw invalidRoot(root, "does not exist");
  try {
    const realRoot = await realpath(directory.path);
    if (realRoot === sep) throw rootIsFilesystemRoot(root);
    return { directory, realRoot };
  } catch (err) {
    directory.close();
    throw StowageError.is(err) ? err : invalidRoot(root, "cannot be resolved", err);
  }
}

/**
 * The names from the root down to `filePath`, worked out on the path's text alone: a relative
 * path is taken from the root, an absolute one must lie lexically inside it (as the caller spells
 * the root, or as its real path). `..` that climbs out, and the root itself, are `OUTSIDE_ROOT`.
 */
function segmentsInside(root: string, realRoot: string, filePath: string): string[] {
  const bases = isAbsolute(filePath) ? [realRoot, resolve(root)] : [realRoot];
  for (const base of bases) {
    const inside = relative(base, resolve(base, filePath));
    if (inside === "" || inside === ".." || inside.startsWith(`..${sep}`) || isAbsolute(inside)) continue;
    return inside.split(sep);
  }
  throw forbidden(filePath, "is outside the upload root", "OUTSIDE_ROOT");
}

/** A refusal of core's opener, said about the path the caller gave (never the root's absolute path). */
function refusal(err: unknown, filePath: string): unknown {
  if (!StowageError.is(err)) return err;
  switch (err.reason) {
    case "SYMLINK_REFUSED":
      return forbidden(
        filePath,
        "leads through a symbolic link; links below the upload root are never followed",
        "SYMLINK_REFUSED",
        err,
      );
    case "NOT_A_REGULAR_FILE":
      return forbidden(filePath, "is not a regular file", "NOT_A_REGULAR_FILE", err);
    case "HARD_LINKED":
      return forbidden(
        filePath,
        "has other names (hard links): it could be a file from outside the upload root",
        "HARD_LINKED",
        err,
      );
  }
  if (err.code === "ABORTED" || err.reason === undefined) return err;
  return new StowageError(err.code, `${describeValue(filePath)} cannot be read (${err.reason})`, {
    reason: err.reason,
    cause: err,
  });
}

/**
 * Opens `filePath` (absolute, or relative to `root`) for reading when it is a regular file inside
 * `root`: anything else is FORBIDDEN. The root is a workspace the model (or the agent it drives)
 * chooses paths in and can change meanwhile, so this holds whatever happens to the workspace
 * during the call:
 * - the path is resolved on its text alone and must name something below the root
 *   (`OUTSIDE_ROOT`; an absolute path must start with the root);
 * - the file is opened by walking from the root's descriptor, one name at a time, never following
 *   a link (`SYMLINK_REFUSED`, also for a link that stays inside): a directory of the path swapped
 *   for a link is refused, or, swapped after it was opened, changes nothing;
 * - the descriptor itself must be a regular file (`NOT_A_REGULAR_FILE`; a FIFO is opened without
 *   waiting, then refused) with no other name (`HARD_LINKED`: a hard link could be a host file's
 *   other name, which no walk can see).
 * The root itself may be a link (the caller chose it); one that resolves to `/` is INVALID_INPUT.
 */
export async function openInsideRoot(root: string, filePath: string): Promise<OpenedInsideRoot> {
  if (filePath.includes("\u0000")) {
    throw new StowageError("INVALID_INPUT", "filePath must not contain NUL", { reason: "INVALID_PATH" });
  }
  const { directory, realRoot } = await openRoot(root);
  try {
    const segments = segmentsInside(root, realRoot, filePath);
    const opened = await openFileBeneath(directory, segments, { refuseHardLinks: true }).catch(
      (err: unknown) => {
        throw refusal(err, filePath);
      },
    );
    if (!opened) {
      throw new StowageError("NOT_FOUND", `${describeValue(filePath)} does not exist`, { reason: "ENOENT" });
    }
    return { handle: opened.handle, realPath: join(realRoot, ...segments), size: opened.stats.size };
  } finally {
    directory.close();
  }
}

/** INVALID_INPUT: an upload root of `/` lets the tool read the whole host. */
export function rootIsFilesystemRoot(root: string): StowageError {
  return new StowageError(
    "INVALID_INPUT",
    `root ${describeValue(root)} is the file system's root: give the agent's workspace`,
    { reason: "INVALID_UPLOAD_ROOT" },
  );
}
