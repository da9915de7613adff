import { Buffer } from "node:buffer";
import { assertSafeId, StowageError, sha256Hex } from "@stowage/core";

// A store's cursor is opaque (a key, base64 of a key, …) and may hold `/`; the page cursor handed
// to callers wraps it in base64url, behind a tag of the listing it belongs to, so that it is a
// safe id and a cursor of one thread's listing is refused by another's.
const TAG_LENGTH = 12;
// Longest cursor an ObjectStore listing hands out and takes back (core's README: 4,096 characters).
const MAX_CURSOR_LENGTH = 4096;
// At most 3 UTF-8 bytes per UTF-16 unit of the store cursor, 4 base64url characters per 3 bytes.
const MAX_PAGE_CURSOR_LENGTH = TAG_LENGTH + 1 + MAX_CURSOR_LENGTH * 4;

const tagOf = (listing: string) => sha256Hex(listing).slice(0, TAG_LENGTH);

/** The page cursor for the store cursor `storeCursor` of the listing under `listing`. */
export function encodePageCursor(listing: string, storeCursor: string): string {
  return `${tagOf(listing)}.${Buffer.from(storeCursor).toString("base64url")}`;
}

/** The store cursor inside `cursor`; throws INVALID_INPUT unless it is a page cursor of `listing`. */
export function decodePageCursor(listing: string, cursor: unknown): string {
  assertSafeId(cursor, "cursor", MAX_PAGE_CURSOR_LENGTH);
  const dot = cursor.indexOf(".");
  const encoded = cursor.slice(dot + 1);
  const storeCursor = Buffer.from(encoded, "base64url").toString("utf8");
  if (
    dot !== TAG_LENGTH ||
    cursor.slice(0, dot) !== tagOf(listing) ||
    storeCursor.length === 0 ||
    Buffer.from(storeCursor).toString("base64url") !== encoded
  ) {
    throw new StowageError("INVALID_INPUT", "cursor is not one this listing returned");
  }
  return storeCursor;
}
