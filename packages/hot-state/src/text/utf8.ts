const encoder = new TextEncoder();
const strictDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const REPLACEMENT_CHARACTER = Buffer.from([0xef, 0xbf, 0xbd]);

/**
 * `index` moved back by one when it falls between the two halves of a surrogate pair, so that
 * `text.slice(0, index)` and `text.slice(index)` never hold half a character.
 */
export function surrogateSafeIndex(text: string, index: number): number {
  const high = text.charCodeAt(index - 1);
  const low = text.charCodeAt(index);
  return index > 0 && high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff ? index - 1 : index;
}

/**
 * False when `text` holds a lone surrogate. The native `isWellFormed` (Node 20+) is several times
 * faster than core's regex-based `isWellFormedUnicode` on large texts.
 */
export const isWellFormedText = (text: string): boolean =>
  (text as string & { isWellFormed(): boolean }).isWellFormed();

/**
 * `text` as UTF-8, or `null` when it holds a lone surrogate (which the encoder would silently
 * turn into U+FFFD). The exact check runs only when the bytes contain U+FFFD at all, so the
 * common case costs one byte search instead of a second pass over the string.
 */
export function encodeWellFormed(text: string): Uint8Array | null {
  const bytes = encoder.encode(text);
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return view.indexOf(REPLACEMENT_CHARACTER) !== -1 && !isWellFormedText(text) ? null : bytes;
}

/** The bytes as UTF-8 text, or `null` when they are not valid UTF-8. */
export function decodeUtf8(bytes: Uint8Array): string | null {
  try {
    return strictDecoder.decode(bytes);
  } catch {
    return null;
  }
}
