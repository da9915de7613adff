import { isWellFormedText } from "./surrogate-safe.js";

const encoder = new TextEncoder();
const REPLACEMENT_CHARACTER = Buffer.from([0xef, 0xbf, 0xbd]);

/**
 * `text` as UTF-8, or `null` when it holds a lone surrogate (which the encoder would silently
 * turn into U+FFFD). The exact check runs only when the bytes contain U+FFFD at all, so the
 * common case costs one byte search instead of a second pass over the string.
 */
export function encodeWellFormed(text: string): Uint8Array | null {
  const bytes = encoder.encode(text);
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.indexOf(REPLACEMENT_CHARACTER) !== -1 && !isWellFormedText(text)) return null;
  return bytes;
}
