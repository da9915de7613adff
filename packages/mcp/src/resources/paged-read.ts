import { Buffer } from "node:buffer";
import type { InternalResource, InternalUrlRouter } from "@stowage/artifacts";
import { describeValue, StowageError } from "@stowage/core";

/** Most bytes of text one resource read carries; larger reads go by pages. */
export const MAX_RESOURCE_READ_BYTES = 1024 * 1024;
/** Lines a page has when a tool call gives no `limit`. */
export const DEFAULT_PAGE_LINES = 500;
/** Most lines one page may ask for. */
export const MAX_PAGE_LINES = 10_000;
/** Most bytes of text one tool result carries (it goes into a model's context). */
export const MAX_TOOL_RESULT_BYTES = 256 * 1024;
/**
 * Most bytes read from disk to serve a slice: a line longer than a page, or the output a JSON
 * value is extracted from (extraction parses the whole output). The router's own default bound
 * (artifacts' README: 16 MiB).
 */
const MAX_SOURCE_READ_BYTES = 16 * 1024 * 1024;

/** Where the next read starts: a page of lines, or the rest of one line (or of an extracted value) from a character. */
export interface NextRead {
  offset?: number;
  limit?: number;
  charOffset?: number;
}

/** What one bounded read returned, and how to read on. */
export interface BoundedRead {
  read: InternalResource;
  /** Set when the text is a slice of one line or of an extracted value: characters `[first, end)` of `total`. */
  chars?: { first: number; end: number; total: number };
  /** The read to make next; absent at the end. */
  next?: NextRead;
}

export interface BoundedReadOptions {
  offset?: number | undefined;
  limit?: number | undefined;
  /** 0-based character of the line at `offset` (or of the extracted value) to start a slice at. */
  charOffset?: number | undefined;
  /** Most bytes of text returned. */
  maxBytes: number;
  signal?: AbortSignal | undefined;
  /** Says how to make a read (a URI for a resource, tool arguments for a tool): used in TOO_LARGE messages. */
  describe(next: NextRead): string;
}

/** An `agent://<id>/path` or `agent://<id>?q=` URL: a JSON value extracted from the output. */
export function isExtraction(url: string): boolean {
  return url.startsWith("agent://") && /[/?]/.test(url.slice("agent://".length));
}

const isTooLarge = (err: unknown) => StowageError.is(err, "TOO_LARGE") && err.reason === "READ_TOO_LARGE";

/**
 * Characters of `text` from `first` holding at most `maxBytes` of UTF-8, never splitting a
 * surrogate pair, and at least one character so that slicing always advances.
 */
function sliceEnd(text: string, first: number, maxBytes: number): number {
  let end = Math.min(text.length, first + maxBytes);
  while (end > first + 1 && Buffer.byteLength(text.slice(first, end)) > maxBytes) {
    end = first + Math.max(1, Math.floor((end - first) * 0.9));
  }
  const code = text.charCodeAt(end - 1);
  if (end < text.length && end - first > 1 && code >= 0xd800 && code <= 0xdbff) end--;
  return end;
}

/**
 * Characters of `read.text` from `charOffset`, at most `maxBytes` of them; `line` is the line the
 * text is (absent for an extracted value) and `after` the read past its end.
 */
function slice(
  read: InternalResource,
  charOffset: number,
  maxBytes: number,
  line: number | undefined,
  after: NextRead | undefined,
): BoundedRead {
  const { text } = read;
  if (charOffset > 0 && charOffset >= text.length) {
    throw new StowageError(
      "INVALID_INPUT",
      `char_offset ${charOffset} is past the end (${text.length} characters)`,
      {
        reason: "OFFSET_PAST_END",
        details: { charOffset, totalChars: text.length },
      },
    );
  }
  const end = sliceEnd(text, charOffset, maxBytes);
  const next =
    end < text.length ? { ...(line === undefined ? {} : { offset: line }), charOffset: end } : after;
  return {
    read: { ...read, text: text.slice(charOffset, end) },
    chars: { first: charOffset, end, total: text.length },
    ...(next ? { next } : {}),
  };
}

/** Line `line` alone, read up to {@link MAX_SOURCE_READ_BYTES} to be sliced. */
async function wholeLine(read: Reader, url: string, line: number): Promise<InternalResource> {
  try {
    return await read({ offset: line, limit: 1, maxBytes: MAX_SOURCE_READ_BYTES });
  } catch (err) {
    if (!isTooLarge(err)) throw err;
    throw new StowageError(
      "TOO_LARGE",
      `${url}: line ${line} is longer than ${MAX_SOURCE_READ_BYTES} bytes, the most a slice is cut from`,
      { reason: "LINE_TOO_LARGE", details: { line, maxBytes: MAX_SOURCE_READ_BYTES } },
    );
  }
}

/** A line slice of `line` from `charOffset`, going on to the next line at its end. */
async function lineSlice(read: Reader, url: string, line: number, charOffset: number, maxBytes: number) {
  const whole = await wholeLine(read, url, line);
  return slice(whole, charOffset, maxBytes, line, whole.lines?.hasMore ? { offset: line + 1 } : undefined);
}

type Reader = (options: { offset?: number; limit?: number; maxBytes: number }) => Promise<InternalResource>;

/**
 * One read through the session's router, never more than `maxBytes` of text and never a dead end:
 * - a whole read too large for the bound fails with TOO_LARGE naming a read that does fit (found
 *   by trying it), never the one that just failed;
 * - a page returns as many whole lines as fit (fewer than `limit`), and `next` says where to go on;
 * - a line longer than the bound is returned a slice of characters at a time (`charOffset`);
 * - a JSON value extracted from an output larger than the bound is found in the whole output (up
 *   to {@link MAX_SOURCE_READ_BYTES}) and returned a slice at a time when it is itself too large.
 */
export async function boundedRead(
  router: InternalUrlRouter,
  url: string,
  options: BoundedReadOptions,
): Promise<BoundedRead> {
  const { offset, limit, charOffset, maxBytes, signal, describe } = options;
  if (limit !== undefined && (limit < 1 || limit > MAX_PAGE_LINES)) {
    throw new StowageError("INVALID_INPUT", `limit must be from 1 to ${MAX_PAGE_LINES}, got ${limit}`, {
      reason: "INVALID_READ_OPTION",
    });
  }
  if (charOffset !== undefined && (!Number.isSafeInteger(charOffset) || charOffset < 0)) {
    throw new StowageError(
      "INVALID_INPUT",
      `char_offset must be a non-negative integer, got ${describeValue(charOffset)}`,
      { reason: "INVALID_READ_OPTION" },
    );
  }
  const read: Reader = (readOptions) => router.read(url, { ...readOptions, ...(signal ? { signal } : {}) });

  if (isExtraction(url) && offset === undefined && limit === undefined) {
    const extracted = await read({ maxBytes: MAX_SOURCE_READ_BYTES }).catch((err: unknown) => {
      if (!isTooLarge(err)) throw err;
      throw new StowageError(
        "TOO_LARGE",
        `${url}: the output is larger than ${MAX_SOURCE_READ_BYTES} bytes, and extraction parses all of it; read the output by lines instead`,
        { reason: "READ_TOO_LARGE", details: { maxBytes: MAX_SOURCE_READ_BYTES } },
      );
    });
    if (charOffset === undefined && Buffer.byteLength(extracted.text) <= maxBytes) return { read: extracted };
    return slice(extracted, charOffset ?? 0, maxBytes, undefined, undefined);
  }

  if (charOffset !== undefined) {
    if (limit !== undefined && limit !== 1) {
      throw new StowageError("INVALID_INPUT", "char_offset reads one line: give no limit, or limit 1", {
        reason: "INVALID_READ_OPTION",
      });
    }
    return lineSlice(read, url, offset ?? 1, charOffset, maxBytes);
  }

  if (offset === undefined && limit === undefined) {
    try {
      return { read: await read({ maxBytes }) };
    } catch (err) {
      if (!isTooLarge(err)) throw err;
      // Name a read that fits, found by making it: suggesting one that fails again is a loop.
      const first = await fittedPage(read, url, 1, DEFAULT_PAGE_LINES, maxBytes);
      const next: NextRead = first.chars
        ? { offset: 1, charOffset: 0 }
        : { offset: 1, limit: first.read.lines!.last };
      throw new StowageError(
        "TOO_LARGE",
        `${url} is larger than ${maxBytes} bytes in one read: read it in pages, starting with ${describe(next)}`,
        { reason: "READ_TOO_LARGE", details: { maxBytes, next } },
      );
    }
  }
  return fittedPage(read, url, offset ?? 1, limit, maxBytes);
}

/**
 * The page from `offset`, with at most `limit` lines (all the rest when none) and as many as fit
 * `maxBytes`: a page too large is asked for again with half the lines, down to one line, and a
 * line too large alone is sliced.
 */
async function fittedPage(
  read: Reader,
  url: string,
  offset: number,
  limit: number | undefined,
  maxBytes: number,
): Promise<BoundedRead> {
  for (let lines = limit; ; ) {
    try {
      const page = await read({ offset, ...(lines === undefined ? {} : { limit: lines }), maxBytes });
      const range = page.lines!;
      if (!range.hasMore) return { read: page };
      return { read: page, next: { offset: range.last + 1, ...(limit === undefined ? {} : { limit }) } };
    } catch (err) {
      if (!isTooLarge(err)) throw err;
      if (lines === 1) return lineSlice(read, url, offset, 0, maxBytes);
      lines = Math.max(1, Math.floor(Math.min(lines ?? DEFAULT_PAGE_LINES * 2, MAX_PAGE_LINES) / 2));
    }
  }
}
