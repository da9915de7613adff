import { closeSync, constants, lstatSync, mkdirSync, openSync, statSync } from "node:fs";
import { join } from "node:path";
import { describeValue } from "../describe-value.js";
import { StowageError } from "../errors.js";
import { errnoOf, fromSystemError } from "../system-errors.js";

const DIRECTORY = constants.O_RDONLY | constants.O_DIRECTORY;
const DIRECTORY_NO_FOLLOW = DIRECTORY | constants.O_NOFOLLOW;

/**
 * On Linux `/proc/self/fd/<fd>/<name>` resolves `<name>` inside the directory the descriptor
 * holds, whatever has happened to its path since: openat(2) for the path-based APIs Node has.
 * Checked once; elsewhere (macOS) each component is checked with lstat just before it is used,
 * which leaves a short window between the check and the use.
 */
const FD_PATHS = (() => {
  try {
    const fd = openSync("/", DIRECTORY);
    try {
      lstatSync(`/proc/self/fd/${fd}/.`);
      return true;
    } finally {
      closeSync(fd);
    }
  } catch {
    return false;
  }
})();

/** A directory held open: what is in it is reached as `${path}/${name}` until `close()`. */
export interface OpenedDirectory {
  /**
   * Names the directory itself for path-based calls: `/proc/self/fd/<fd>` on Linux, so that
   * renaming it or swapping its path for a link afterwards changes nothing; its own path
   * elsewhere. Meaningless once closed.
   */
  readonly path: string;
  /** The directory's path as the caller spells it, for messages; never opened. */
  readonly lexicalPath: string;
  /** Releases the directory; later calls do nothing. */
  close(): void;
}

/** Options of {@link openDirectoryBeneath}. */
export interface OpenBeneathOptions {
  /** Creates missing directories (the root with its parents, then each segment). Default false: a missing one gives null. */
  create?: boolean;
  /** The reason of the FORBIDDEN error a link below the root gets. Default `SYMLINK_REFUSED`. */
  refusedReason?: string;
  /**
   * A file (or anything but a directory) where a segment should be is refused like a link
   * (FORBIDDEN) instead of CONFLICT (reason `NOT_A_DIRECTORY`). Default false.
   */
  refuseNonDirectories?: boolean;
  /**
   * Called right after this call makes a directory, with its path, top first (of a root made with
   * its parents, only the topmost): what to remove to undo the creation.
   */
  onCreate?: (lexicalPath: string) => void;
}

/** FORBIDDEN (reason `SYMLINK_REFUSED` unless given): a symbolic link below a root, never followed. */
export function symlinkRefused(
  path: string,
  options: { reason?: string; cause?: unknown } = {},
): StowageError {
  return new StowageError(
    "FORBIDDEN",
    `${describeValue(path)} is a symbolic link (or not a directory); links below the root are never followed, so nothing is read or written outside it`,
    {
      reason: options.reason ?? "SYMLINK_REFUSED",
      details: { path },
      ...(options.cause === undefined ? {} : { cause: options.cause }),
    },
  );
}

function notADirectory(path: string, cause: unknown): StowageError {
  return new StowageError("CONFLICT", `${describeValue(path)} is a file, not a directory`, {
    reason: "NOT_A_DIRECTORY",
    details: { path },
    ...(cause === undefined ? {} : { cause }),
  });
}

/** Only to name a refusal: whether `path` is a link now (nothing is opened through the answer). */
function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

function held(fd: number, lexicalPath: string): OpenedDirectory {
  let open = true;
  return {
    path: `/proc/self/fd/${fd}`,
    lexicalPath,
    close() {
      if (open) closeSync(fd);
      open = false;
    },
  };
}

const unheld = (path: string): OpenedDirectory => ({ path, lexicalPath: path, close() {} });

/** One path component: not empty, `.` or `..`, no `/` and no NUL. */
export function assertSegment(segment: unknown): asserts segment is string {
  if (
    typeof segment !== "string" ||
    segment === "" ||
    segment === "." ||
    segment === ".." ||
    segment.includes("/") ||
    segment.includes("\0")
  ) {
    throw new StowageError(
      "INVALID_INPUT",
      `a path segment below a root must be one name (no "/", ".", ".." or NUL), got ${describeValue(segment)}`,
    );
  }
}

function makeRoot(root: string, options: OpenBeneathOptions): void {
  let created: string | undefined;
  try {
    created = mkdirSync(root, { recursive: true });
  } catch (err) {
    const errno = errnoOf(err);
    if (errno === "EEXIST" || errno === "ENOTDIR") throw notADirectory(root, err);
    throw fromSystemError(err, `create ${root}`);
  }
  if (created !== undefined) options.onCreate?.(created);
}

/** Opens the root the caller gave, following a link there (the caller chose it); null when missing. */
function openRoot(root: string, options: OpenBeneathOptions): OpenedDirectory | null {
  for (let attempt = 0; ; attempt++) {
    try {
      if (FD_PATHS) return held(openSync(root, DIRECTORY), root);
      // stat follows a link at the root: the caller's choice. Only a file there is refused.
      if (!statSync(root).isDirectory()) throw notADirectory(root, undefined);
      return unheld(root);
    } catch (err) {
      if (StowageError.is(err)) throw err;
      const errno = errnoOf(err);
      if (errno === "ENOTDIR") throw notADirectory(root, err);
      if (errno !== "ENOENT" || attempt > 0) throw fromSystemError(err, `open ${root}`);
      if (!options.create) return null;
    }
    makeRoot(root, options);
  }
}

const isDirectory = (path: string): boolean => {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
};

/**
 * Where a step starts: a directory held open, or the caller's root named by its path, which is
 * then resolved in the same system call as the first segment (a link at the root is followed
 * either way: it is the caller's), saving an open and a close per walk.
 */
interface StepParent {
  path: string;
  lexicalPath: string;
  givenRoot: boolean;
}

/** Opens `segment` inside `parent` without following a link; null when it is missing. */
function openStep(parent: StepParent, segment: string, options: OpenBeneathOptions): OpenedDirectory | null {
  const path = `${parent.path}/${segment}`;
  const lexical = join(parent.lexicalPath, segment);
  const refused = (cause?: unknown) =>
    symlinkRefused(lexical, { ...(options.refusedReason ? { reason: options.refusedReason } : {}), cause });
  for (let attempt = 0; ; attempt++) {
    try {
      if (FD_PATHS) return held(openSync(path, DIRECTORY_NO_FOLLOW), lexical);
      const info = lstatSync(path);
      if (info.isSymbolicLink()) throw refused();
      if (!info.isDirectory())
        throw options.refuseNonDirectories ? refused() : notADirectory(lexical, undefined);
      return { path, lexicalPath: lexical, close() {} };
    } catch (err) {
      if (StowageError.is(err)) throw err;
      const errno = errnoOf(err);
      // O_NOFOLLOW with O_DIRECTORY refuses a link with ELOOP or ENOTDIR, depending on the kernel.
      if (errno === "ELOOP" || (errno === "ENOTDIR" && isLink(path))) throw refused(err);
      if (errno === "ENOTDIR") {
        if (parent.givenRoot && !isDirectory(parent.path)) throw notADirectory(parent.path, err);
        throw options.refuseNonDirectories ? refused(err) : notADirectory(lexical, err);
      }
      if (errno !== "ENOENT") throw fromSystemError(err, `open ${lexical}`);
      if (!options.create) return null;
      // Created once and gone again at once: someone is removing the tree; report it.
      if (attempt > 0) throw fromSystemError(err, `open ${lexical}`);
    }
    // Only on the way to creating a directory: the root may be missing too.
    if (parent.givenRoot) makeRoot(parent.path, options);
    try {
      // mkdir never follows a link as its last component: one planted now fails the open above.
      mkdirSync(path);
      options.onCreate?.(lexical);
    } catch (err) {
      if (errnoOf(err) !== "EEXIST") throw fromSystemError(err, `create ${lexical}`);
    }
  }
}

/**
 * Opens the directory `root/segments…` without following a symbolic link below `root`. `root` is
 * the caller's (a path, where a link is followed: the caller chose it, or a directory already
 * opened so). Each segment is opened with `O_NOFOLLOW` relative to the directory above it, so a
 * link planted at any depth, before or during the walk, is refused with FORBIDDEN (reason
 * `SYMLINK_REFUSED`, or `refusedReason`) instead of leading out of the root; a file in the way
 * is CONFLICT (reason `NOT_A_DIRECTORY`). A missing directory gives null, or is made with
 * `create`. Segments are single names: `..`, `.`, `""` and anything with `/` are INVALID_INPUT.
 *
 * The system calls are synchronous: on cached directories each costs a few microseconds, where a
 * thread-pool round trip would cost ten times that. Close what is returned once done with it
 * (an `OpenedDirectory` given as `root` is not closed here).
 */
export function openDirectoryBeneath(
  root: string | OpenedDirectory,
  segments: readonly string[],
  options: OpenBeneathOptions = {},
): OpenedDirectory | null {
  for (const segment of segments) assertSegment(segment);
  if (typeof root === "string" && segments.length === 0) return openRoot(root, options);
  let parent: StepParent =
    typeof root === "string"
      ? { path: root, lexicalPath: root, givenRoot: true }
      : { path: root.path, lexicalPath: root.lexicalPath, givenRoot: false };
  // Only what this call opened; an OpenedDirectory given as the root stays the caller's.
  let current: OpenedDirectory | null = null;
  try {
    for (const segment of segments) {
      const next = openStep(parent, segment, options);
      current?.close();
      current = next;
      if (!next) return null;
      parent = { path: next.path, lexicalPath: next.lexicalPath, givenRoot: false };
    }
  } catch (err) {
    current?.close();
    throw err;
  }
  // No segment: the caller's own directory handed back; closing it must not close theirs.
  return current ?? { ...(root as OpenedDirectory), close() {} };
}

/** A path naming the file open as `fd` itself where the system has one (Linux), else `fallback`. */
export function descriptorPath(fd: number, fallback: string): string {
  return FD_PATHS ? `/proc/self/fd/${fd}` : fallback;
}
