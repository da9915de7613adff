import { assertContentType } from "./content-type.js";
import { describeValue } from "./describe-value.js";
import { StowageError } from "./errors.js";
import { assertSafeKey, pathSegmentProblem } from "./keys.js";
import {
  DEFAULT_LIST_LIMIT,
  type DirectDownloadRequest,
  type DirectUploadRequest,
  MAX_CURSOR_LENGTH,
  MAX_LIST_LIMIT,
  type ObjectBody,
} from "./object-store.js";
import { isSha256Hex } from "./sha256.js";
import { isReadableStream } from "./streams.js";

// The checks `defineObjectStore` makes before a driver is called: one place for every backend.

/** Longest signed URL lifetime accepted (the S3 limit: 7 days). */
export const MAX_SIGNED_URL_SECONDS = 7 * 24 * 3600;

export function assertIfNoneMatch(value: unknown): void {
  if (value !== undefined && value !== "*") {
    throw new StowageError("INVALID_INPUT", `ifNoneMatch must be "*" or absent, got ${describeValue(value)}`);
  }
}

export function assertBody(body: unknown): asserts body is ObjectBody {
  if (body instanceof Uint8Array) return;
  if (isReadableStream(body)) {
    if (body.locked) throw new StowageError("INVALID_INPUT", "body stream is locked (already being read)");
    return;
  }
  throw new StowageError(
    "INVALID_INPUT",
    `body must be a Uint8Array or a ReadableStream<Uint8Array>, got ${describeValue(body)}`,
  );
}

export function listLimit(limit: unknown): number {
  if (limit === undefined) return DEFAULT_LIST_LIMIT;
  if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) {
    throw new StowageError(
      "INVALID_INPUT",
      `limit must be an integer from 1 to ${MAX_LIST_LIMIT}, got ${describeValue(limit)}`,
      typeof limit === "number" && limit > MAX_LIST_LIMIT ? { details: { limit: MAX_LIST_LIMIT } } : {},
    );
  }
  return limit;
}

export function assertCursor(cursor: unknown): asserts cursor is string | undefined {
  if (cursor === undefined) return;
  if (typeof cursor !== "string" || cursor.length === 0 || cursor.length > MAX_CURSOR_LENGTH) {
    throw new StowageError(
      "INVALID_INPUT",
      `cursor must be the non-empty string returned by the previous page, got ${describeValue(cursor)}`,
      typeof cursor === "string" && cursor.length > MAX_CURSOR_LENGTH
        ? { details: { limit: MAX_CURSOR_LENGTH } }
        : {},
    );
  }
}

export function assertDirectUpload(request: DirectUploadRequest): void {
  assertSafeKey(request.key);
  assertContentType(request.contentType);
  if (!Number.isSafeInteger(request.contentLength) || request.contentLength < 0) {
    throw new StowageError(
      "INVALID_INPUT",
      `contentLength must be a non-negative integer, got ${describeValue(request.contentLength)}`,
    );
  }
  if (request.sha256 !== undefined && !isSha256Hex(request.sha256)) {
    throw new StowageError(
      "INVALID_INPUT",
      `sha256 must be 64 lowercase hex characters, got ${describeValue(request.sha256)}`,
    );
  }
  assertExpiry(request.expiresInSeconds);
}

export function assertDirectDownload(request: DirectDownloadRequest): void {
  assertSafeKey(request.key);
  assertExpiry(request.expiresInSeconds);
  const { disposition, filename } = request;
  if (disposition !== undefined && disposition !== "inline" && disposition !== "attachment") {
    throw new StowageError(
      "INVALID_INPUT",
      `disposition must be "inline" or "attachment", got ${describeValue(disposition)}`,
    );
  }
  const problem = filename === undefined ? undefined : pathSegmentProblem(filename);
  if (problem) throw new StowageError("INVALID_INPUT", `filename ${problem}, got ${describeValue(filename)}`);
}

function assertExpiry(seconds: unknown): void {
  if (
    typeof seconds !== "number" ||
    !Number.isInteger(seconds) ||
    seconds < 1 ||
    seconds > MAX_SIGNED_URL_SECONDS
  ) {
    throw new StowageError(
      "INVALID_INPUT",
      `expiresInSeconds must be an integer from 1 to ${MAX_SIGNED_URL_SECONDS}, got ${describeValue(seconds)}`,
      typeof seconds === "number" && seconds > MAX_SIGNED_URL_SECONDS
        ? { details: { limit: MAX_SIGNED_URL_SECONDS } }
        : {},
    );
  }
}
