import { describeValue, StowageError } from "@stowage/core";

/** Most bytes one read returns (a whole file, or one page of lines); more fails with TOO_LARGE. */
const DEFAULT_MAX_READ_BYTES = 16 * 1024 * 1024;
/** The largest `maxBytes` a caller may ask for (a JavaScript string cannot hold much more). */
export const MAX_READ_BYTES_LIMIT = 256 * 1024 * 1024;

export interface ReadOptions {
  /** First line to return, 1-based. Giving `offset` or `limit` reads a page of lines. */
  offset?: number;
  /** Most lines to return. */
  limit?: number;
  /** Most bytes to return; default 16 MiB. */
  maxBytes?: number;
  signal?: AbortSignal;
}

/** Lines a paged read returned. */
export interface LineRange {
  /** The `offset` asked for. */
  first: number;
  /** The last line returned (`first - 1` when the page is empty). */
  last: number;
  /** True when the file has lines after `last`. */
  hasMore: boolean;
  /** Lines in the file, known when the read reached its end. */
  totalLines?: number;
}

/** Options of a read of raw bytes (`readBytes`): a range from a byte position. */
export interface ByteRangeOptions {
  /** First byte to return, 0-based. Default 0; at most the file's size (which returns no bytes). */
  start?: number;
  /** Most bytes to return; default 16 MiB, at most 256 MiB. */
  maxBytes?: number;
  signal?: AbortSignal;
}

export interface ByteRange {
  start: number;
  maxBytes: number;
}

export interface PageRequest {
  offset: number;
  limit: number;
}

export interface CheckedReadOptions {
  page: PageRequest | undefined;
  maxBytes: number;
}

function integerOption(value: unknown, name: string, min: number, max: number): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new StowageError(
      "INVALID_INPUT",
      `${name} must be an integer from ${min} to ${max}, got ${describeValue(value)}`,
      // A bound a caller can reach says so; MAX_SAFE_INTEGER is no limit of this package's.
      {
        reason: "INVALID_READ_OPTION",
        ...(max < Number.MAX_SAFE_INTEGER ? { details: { limit: max } } : {}),
      },
    );
  }
  return value;
}

function positiveInteger(value: unknown, name: string, max: number): number {
  return integerOption(value, name, 1, max);
}

function checkMaxBytes(value: unknown): number {
  return value === undefined
    ? DEFAULT_MAX_READ_BYTES
    : positiveInteger(value, "maxBytes", MAX_READ_BYTES_LIMIT);
}

/** Validates `offset`, `limit` and `maxBytes`; `page` is set when either of the first two is. */
export function checkReadOptions(options: ReadOptions): CheckedReadOptions {
  const maxBytes = checkMaxBytes(options.maxBytes);
  if (options.offset === undefined && options.limit === undefined) return { page: undefined, maxBytes };
  const offset =
    options.offset === undefined ? 1 : positiveInteger(options.offset, "offset", Number.MAX_SAFE_INTEGER);
  const limit =
    options.limit === undefined
      ? Number.MAX_SAFE_INTEGER
      : positiveInteger(options.limit, "limit", Number.MAX_SAFE_INTEGER);
  return { page: { offset, limit }, maxBytes };
}

/**
 * Validates `start` (an integer from 0) and `maxBytes`; whether `start` is past the end is known
 * only once the file is open (`readByteRange`).
 */
export function checkByteRangeOptions(options: ByteRangeOptions): ByteRange {
  const maxBytes = checkMaxBytes(options.maxBytes);
  const start =
    options.start === undefined ? 0 : integerOption(options.start, "start", 0, Number.MAX_SAFE_INTEGER);
  return { start, maxBytes };
}
