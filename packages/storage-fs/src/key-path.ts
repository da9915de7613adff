import { join, resolve, sep } from "node:path";
import { describeValue, StowageError } from "@stowage/core";
import { type OpenedDirectory, openDirectoryBeneath, TEMP_FILE_PREFIX } from "@stowage/core/fs";

/** The directory holding a key's file, opened beneath the root, and the file's name in it. */
export interface KeyLocation {
  directory: OpenedDirectory;
  /** The file's name in `directory`: its path is `${directory.path}/${name}`. */
  name: string;
  /** The file's path as the root spells it, for messages and `file://` URIs (never opened). */
  lexical: string;
  /** The directory's path as the root spells it. */
  lexicalDirectory: string;
}

/**
 * Maps validated keys to paths under `root`. Keys reach this point already checked by
 * `defineObjectStore`; the checks here are the last line before the disk. Files are reached
 * through {@link locate}, which never follows a symbolic link below the root.
 */
export function createKeyPaths(root: string) {
  const rootPath = resolve(root);
  const rootWithSep = rootPath.endsWith(sep) ? rootPath : rootPath + sep;
  /**
   * The root by its path, never opened: a file directly in it is `${rootPath}/${name}`, which one
   * system call resolves, following a link at the root (the caller chose it) and none at the
   * name (every operation opens, stats, links or renames it without following). As safe as an
   * opened root, and an open and a close cheaper on every operation.
   */
  const rootByPath: OpenedDirectory = { path: rootPath, lexicalPath: rootPath, close() {} };

  function segmentsOf(key: string): string[] {
    const segments = key.split("/");
    if (segments.some((segment) => segment.startsWith(TEMP_FILE_PREFIX))) {
      throw new StowageError(
        "INVALID_INPUT",
        `key segments starting with "${TEMP_FILE_PREFIX}" are reserved for in-progress writes, got ${describeValue(key)}`,
      );
    }
    if (!join(rootPath, ...segments).startsWith(rootWithSep)) {
      throw new StowageError(
        "INVALID_INPUT",
        `key resolves outside the store root, got ${describeValue(key)}`,
      );
    }
    return segments;
  }

  /** The path a key is stored at, as the root spells it (validates the key). */
  function pathFor(key: string): string {
    return join(rootPath, ...segmentsOf(key));
  }

  /**
   * Opens the directory of `key` (creating it with `create`) without following links; null when
   * it does not exist. The caller closes `directory` once done with the file.
   */
  function locate(key: string, create: boolean): KeyLocation | null {
    const segments = segmentsOf(key);
    const name = segments.pop()!;
    const directory = segments.length === 0 ? rootByPath : openDirectoryOf(segments, create);
    if (!directory) return null;
    const lexicalDirectory = directory.lexicalPath;
    return { directory, name, lexical: join(lexicalDirectory, name), lexicalDirectory };
  }

  /** The directory `segments` below the root; null when it is missing or, unless creating, a file is in the way. */
  function openDirectoryOf(segments: readonly string[], create: boolean): OpenedDirectory | null {
    try {
      return openDirectoryBeneath(rootPath, segments, { create });
    } catch (err) {
      // A key below a file cannot exist: a read finds nothing there (a write is CONFLICT).
      if (!create && StowageError.is(err, "CONFLICT")) return null;
      throw err;
    }
  }

  /** The directory holding the complete segments of a listing prefix (`"a/b/c"` → `a/b`), as segments and key. */
  function directoryForPrefix(prefix: string): { segments: string[]; key: string } {
    const cut = prefix.lastIndexOf("/");
    if (cut < 0) return { segments: [], key: "" };
    const dirKey = prefix.slice(0, cut + 1);
    return { segments: dirKey.slice(0, -1).split("/"), key: dirKey };
  }

  return { rootPath, pathFor, locate, openDirectoryOf, directoryForPrefix };
}

export type KeyPaths = ReturnType<typeof createKeyPaths>;
