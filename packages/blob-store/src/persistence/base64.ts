import { sniffImageType } from "@stowage/core";

// Characters whose low bits are zero, so that they can end canonical base64 before padding.
const LAST_BEFORE_TWO_PADS = new Set("AQgw");
const LAST_BEFORE_ONE_PAD = new Set("AEIMQUYcgkosw048");

const WHITESPACE = /[\t\n\r ]/g;
// One alphabet, then at most two `=`: standard (`+/`) or URL-safe (`-_`), never both.
const STANDARD_BODY = /^[A-Za-z0-9+/]*={0,2}$/;
const URL_SAFE_BODY = /^[A-Za-z0-9_-]*={0,2}$/;

/**
 * Decodes canonical standard base64, or returns null. Canonical means that encoding the result
 * again gives back exactly `text`: the common case, decoded without copying the text.
 */
function decodeCanonicalBase64(text: string): Uint8Array | null {
  if (text.length === 0 || text.length % 4 !== 0) return null;
  // Node's decoder also takes the URL-safe alphabet, which would not round-trip.
  if (text.includes("-") || text.includes("_")) return null;
  const padding = text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0;
  const last = text[text.length - 1 - padding]!;
  if (padding === 2 && !LAST_BEFORE_TWO_PADS.has(last)) return null;
  if (padding === 1 && !LAST_BEFORE_ONE_PAD.has(last)) return null;
  const bytes = Buffer.from(text, "base64");
  // Characters outside the alphabet are skipped by the decoder, which shows as a short result.
  if (bytes.byteLength !== (text.length / 4) * 3 - padding) return null;
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * Decodes base64 as agents and tools write it: canonical, line-wrapped (MIME's 76-column lines,
 * with `\n` or `\r\n`), URL-safe (`-_`), or without its `=` padding. Returns null for anything
 * else: a mixed alphabet, a stray character, padding in the middle, an impossible length.
 * Encoding the result gives canonical standard base64, the same bytes in the form every reader
 * accepts; the original spelling is not kept.
 */
export function decodeBase64(text: string): Uint8Array | null {
  const canonical = decodeCanonicalBase64(text);
  if (canonical) return canonical;
  const compact = text.replace(WHITESPACE, "");
  if (compact.length === 0) return null;
  if (!STANDARD_BODY.test(compact) && !URL_SAFE_BODY.test(compact)) return null;
  const padding = compact.endsWith("==") ? 2 : compact.endsWith("=") ? 1 : 0;
  const digits = compact.length - padding;
  // Padding, when present, must complete the last group of four.
  if (padding > 0 && compact.length % 4 !== 0) return null;
  // One digit alone cannot carry a byte.
  if (digits % 4 === 1) return null;
  const bytes = Buffer.from(compact, "base64");
  if (bytes.byteLength !== Math.floor((digits * 3) / 4)) return null;
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Canonical standard base64 (padded, `+/`, one line) of `bytes`. */
export function encodeBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}

// Enough base64 digits to hold the longest image signature core sniffs (WebP: 12 bytes).
const SNIFF_DIGITS = 24;

/**
 * True when `text` is base64 (in any form {@link decodeBase64} reads) of an image, told by the
 * image's first bytes. Only the start is decoded, so a long string costs no more than a short one.
 */
export function isBase64Image(text: string): boolean {
  const head = text.slice(0, SNIFF_DIGITS * 4).replace(WHITESPACE, "");
  if (head.length < SNIFF_DIGITS) return false;
  const digits = head.slice(0, SNIFF_DIGITS);
  if (!STANDARD_BODY.test(digits) && !URL_SAFE_BODY.test(digits)) return false;
  return sniffImageType(new Uint8Array(Buffer.from(digits, "base64"))) !== undefined;
}
