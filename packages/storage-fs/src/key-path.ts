import { join, resolve, sep } from "node:path";
import { describeValue, StowageError } from "@stowage/core";
import { TEMP_FILE_PREFIX } from "@stowage/core/fs";

/**
 * Maps validated keys to paths under `root`. Keys reach this point already checked by
 * `defineObjectStore`; the checks here are the last line before the disk.
 */
export function createKeyPaths(root: string) {
  const rootPath = resolve(root);
  const rootWithSep = rootPath.endsWith(sep) ? rootPath : rootPath + sep;

  function pathFor(key: string): string {
    const segments = key.split("/");
    if (segments.some((segment) => segment.startsWith(TEMP_FILE_PREFIX))) {
      throw new StowageError(
        "INVALID_INPUT",
        `key segments starting with "${TEMP_FILE_PREFIX}" are reserved for in-progress writes, got ${describeValue(key)}`,
      );
    }
    const path = join(rootPath, ...segments);
    if (!path.startsWith(rootWithSep)) {
      throw new StowageError(
        "INVALID_INPUT",
        `key resolves outside the store root, got ${describeValue(key)}`,
      );
    }
    return path;
  }

  /** The directory holding the complete segments of a listing prefix (`"a/b/c"` → `root/a/b`). */
  function directoryForPrefix(prefix: string): { path: string; key: string } {
    const cut = prefix.lastIndexOf("/");
    if (cut < 0) return { path: rootPath, key: "" };
    const dirKey = prefix.slice(0, cut + 1);
    return { path: join(rootPath, ...dirKey.slice(0, -1).split("/")), key: dirKey };
  }

  return { rootPath, pathFor, directoryForPrefix };
}

export type KeyPaths = ReturnType<typeof createKeyPaths>;
