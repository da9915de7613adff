import { isAbsolute, relative, resolve, sep } from "node:path";
import { describeValue, StowageError } from "@stowage/core";

/** Checks that `value` is a usable path and returns it absolute. */
export function checkDirectoryPath(value: unknown, what: string): string {
  if (typeof value !== "string" || value.length === 0 || value.includes("\u0000")) {
    throw new StowageError(
      "INVALID_INPUT",
      `${what} must be a non-empty path without NUL, got ${describeValue(value)}`,
    );
  }
  return resolve(value);
}

/** True when `child` is `parent` or below it (both absolute). */
export function isInside(parent: string, child: string): boolean {
  const path = relative(parent, child);
  return path === "" || (path !== ".." && !path.startsWith(`..${sep}`) && !isAbsolute(path));
}
