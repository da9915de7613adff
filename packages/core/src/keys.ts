import { describeValue } from "./describe-value.js";
import { StowageError } from "./errors.js";
import { isWellFormedUnicode, utf8ByteLength } from "./utf8.js";

/** Longest object key accepted, in UTF-8 bytes (the S3 limit). */
export const MAX_KEY_BYTES = 1024;
/** Longest single path segment accepted, in UTF-8 bytes (NAME_MAX on common file systems). */
export const MAX_SEGMENT_BYTES = 255;

// C0 controls (NUL included) and DEL: invisible in logs, dangerous in terminals and shells.
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

/** Why `segment` is not a safe path segment, or undefined when it is. */
export function pathSegmentProblem(segment: unknown): string | undefined {
  if (typeof segment !== "string") return "must be a string";
  if (segment.length === 0) return "must not be empty";
  if (segment === "." || segment === "..") return `must not be "${segment}"`;
  if (segment.includes("/")) return "must not contain a slash";
  if (segment.includes("\\")) return "must not contain a backslash";
  if (CONTROL_CHARACTER.test(segment)) return "must not contain control characters or NUL";
  if (!isWellFormedUnicode(segment)) return "must be well-formed Unicode (no lone surrogates)";
  if (utf8ByteLength(segment) > MAX_SEGMENT_BYTES) return `must be at most ${MAX_SEGMENT_BYTES} UTF-8 bytes`;
  return undefined;
}

/** Why `key` is not a safe object key, or undefined when it is. */
export function keyProblem(key: unknown): string | undefined {
  if (typeof key !== "string") return "must be a string";
  if (key.length === 0) return "must not be empty";
  if (key.startsWith("/")) return "must be relative (no leading slash)";
  if (utf8ByteLength(key) > MAX_KEY_BYTES) return `must be at most ${MAX_KEY_BYTES} UTF-8 bytes`;
  for (const segment of key.split("/")) {
    const problem = pathSegmentProblem(segment);
    if (problem) return segment === "" ? "must not contain an empty segment" : `segment ${problem}`;
  }
  return undefined;
}

/**
 * Why `prefix` is not a safe listing prefix, or undefined when it is. A prefix is a key whose
 * last segment may be partial or empty (`"logs/"`, `"logs/2026-"`); `""` lists everything.
 */
export function keyPrefixProblem(prefix: unknown): string | undefined {
  if (typeof prefix !== "string") return "must be a string";
  if (prefix === "") return undefined;
  if (prefix.startsWith("/")) return "must be relative (no leading slash)";
  if (utf8ByteLength(prefix) > MAX_KEY_BYTES) return `must be at most ${MAX_KEY_BYTES} UTF-8 bytes`;
  const segments = prefix.split("/");
  const last = segments.pop() ?? "";
  for (const segment of segments) {
    const problem = pathSegmentProblem(segment);
    if (problem) return segment === "" ? "must not contain an empty segment" : `segment ${problem}`;
  }
  // A partial last segment may be "" or "." (dot files), never ".." (a traversal, whatever follows).
  if (last !== "" && last !== ".") {
    const problem = pathSegmentProblem(last);
    if (problem) return `last segment ${problem}`;
  }
  return undefined;
}

export function isSafeKey(key: unknown): key is string {
  return keyProblem(key) === undefined;
}

/** Throws INVALID_INPUT unless `key` is a safe relative object key (`a/b/c.txt`). */
export function assertSafeKey(key: unknown, what = "key"): asserts key is string {
  const problem = keyProblem(key);
  if (problem) throw new StowageError("INVALID_INPUT", `${what} ${problem}, got ${describeValue(key)}`);
}

/** Throws INVALID_INPUT unless `segment` is one safe path segment (no slash, not `..`). */
export function assertSafePathSegment(segment: unknown, what = "path segment"): asserts segment is string {
  const problem = pathSegmentProblem(segment);
  if (problem) throw new StowageError("INVALID_INPUT", `${what} ${problem}, got ${describeValue(segment)}`);
}

/** Throws INVALID_INPUT unless `prefix` is a safe listing prefix. */
export function assertSafeKeyPrefix(prefix: unknown, what = "prefix"): asserts prefix is string {
  const problem = keyPrefixProblem(prefix);
  if (problem) throw new StowageError("INVALID_INPUT", `${what} ${problem}, got ${describeValue(prefix)}`);
}

/** Join segments into a key, validating each segment and the result. */
export function joinKey(...segments: string[]): string {
  for (const segment of segments) assertSafePathSegment(segment);
  const key = segments.join("/");
  assertSafeKey(key);
  return key;
}
