import { describeValue } from "./describe-value.js";
import { StowageError } from "./errors.js";

/** Longest object key accepted, in UTF-8 bytes (the S3 limit). */
export const MAX_KEY_BYTES = 1024;
/** Longest single path segment accepted, in UTF-8 bytes (NAME_MAX on common file systems). */
export const MAX_SEGMENT_BYTES = 255;

const SEGMENT_TOO_LONG = `segment must be at most ${MAX_SEGMENT_BYTES} UTF-8 bytes`;
const KEY_TOO_LONG = `must be at most ${MAX_KEY_BYTES} UTF-8 bytes`;

const SLASH = 0x2f;
const BACKSLASH = 0x5c;

/**
 * One pass over `value` as `/`-separated segments: returns the first problem, or undefined.
 * `last` says how the final segment is judged: `whole` (a key or a segment) or `partial` (a
 * listing prefix, whose last segment may be empty or `.`, but never `..`).
 */
function scanSegments(value: string, last: "whole" | "partial"): string | undefined {
  let totalBytes = 0;
  let segmentStart = 0;
  let segmentBytes = 0;
  for (let i = 0; i <= value.length; i++) {
    const unit = i === value.length ? SLASH : value.charCodeAt(i);
    if (unit === SLASH) {
      const isLast = i === value.length;
      const length = i - segmentStart;
      const partial = isLast && last === "partial";
      if (length === 0 && !partial)
        return isLast && i > 0 ? "must not end with a slash" : "must not contain an empty segment";
      if (length === 1 && value.charCodeAt(segmentStart) === 0x2e && !partial)
        return 'segment must not be "."';
      if (length === 2 && value.startsWith("..", segmentStart)) return 'segment must not be ".."';
      if (segmentBytes > MAX_SEGMENT_BYTES) return SEGMENT_TOO_LONG;
      segmentStart = i + 1;
      segmentBytes = 0;
      totalBytes += 1;
      continue;
    }
    // C0 controls (NUL included) and DEL: invisible in logs, dangerous in terminals and shells.
    if (unit < 0x20 || unit === 0x7f) return "segment must not contain control characters or NUL";
    if (unit === BACKSLASH) return "segment must not contain a backslash";
    let bytes: number;
    if (unit < 0x80) bytes = 1;
    else if (unit < 0x800) bytes = 2;
    else if (unit >= 0xd800 && unit <= 0xdfff) {
      const next = value.charCodeAt(i + 1);
      if (unit > 0xdbff || !(next >= 0xdc00 && next <= 0xdfff)) {
        return "segment must be well-formed Unicode (no lone surrogates)";
      }
      bytes = 4;
      i++;
    } else bytes = 3;
    segmentBytes += bytes;
    totalBytes += bytes;
  }
  if (totalBytes - 1 > MAX_KEY_BYTES) return KEY_TOO_LONG;
  return undefined;
}

/** Why `segment` is not a safe path segment, or undefined when it is. */
export function pathSegmentProblem(segment: unknown): string | undefined {
  if (typeof segment !== "string") return "must be a string";
  if (segment.length === 0) return "must not be empty";
  if (segment.includes("/")) return "must not contain a slash";
  return scanSegments(segment, "whole")?.replace(/^segment /, "");
}

/** Why `key` is not a safe object key, or undefined when it is. */
export function keyProblem(key: unknown): string | undefined {
  if (typeof key !== "string") return "must be a string";
  if (key.length === 0) return "must not be empty";
  if (key.charCodeAt(0) === SLASH) return "must be relative (no leading slash)";
  return scanSegments(key, "whole");
}

/**
 * Why `prefix` is not a safe listing prefix, or undefined when it is. A prefix is a key whose
 * last segment may be partial or empty (`"logs/"`, `"logs/2026-"`); `""` lists everything.
 */
export function keyPrefixProblem(prefix: unknown): string | undefined {
  if (typeof prefix !== "string") return "must be a string";
  if (prefix === "") return undefined;
  if (prefix.charCodeAt(0) === SLASH) return "must be relative (no leading slash)";
  return scanSegments(prefix, "partial");
}

/** The refusal of a key or prefix: a length limit it broke is in `details.limit`. */
function keyError(what: string, problem: string, value: unknown): StowageError {
  const limit =
    problem === KEY_TOO_LONG ? MAX_KEY_BYTES : problem === SEGMENT_TOO_LONG ? MAX_SEGMENT_BYTES : undefined;
  return new StowageError("INVALID_INPUT", `${what} ${problem}, got ${describeValue(value)}`, {
    ...(limit === undefined ? {} : { details: { limit } }),
  });
}

/** Throws INVALID_INPUT unless `key` is a safe relative object key (`a/b/c.txt`). */
export function assertSafeKey(key: unknown, what = "key"): asserts key is string {
  const problem = keyProblem(key);
  if (problem) throw keyError(what, problem, key);
}

/** Throws INVALID_INPUT unless `prefix` is a safe listing prefix. */
export function assertSafeKeyPrefix(prefix: unknown, what = "prefix"): asserts prefix is string {
  const problem = keyPrefixProblem(prefix);
  if (problem) throw keyError(what, problem, prefix);
}

/**
 * Throws INVALID_INPUT unless `prefix` is `""` or a safe key prefix ending in `/`: the
 * "directory" a package keeps its objects under inside a shared store (`"blobs/"`, `"hot-state/"`).
 */
export function assertKeyDirectoryPrefix(prefix: unknown, what = "prefix"): asserts prefix is string {
  assertSafeKeyPrefix(prefix, what);
  if (prefix !== "" && !prefix.endsWith("/")) {
    throw new StowageError("INVALID_INPUT", `${what} must be "" or end in "/", got ${describeValue(prefix)}`);
  }
}
