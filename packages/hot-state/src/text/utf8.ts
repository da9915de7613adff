const encoder = new TextEncoder();
const strictDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const REPLACEMENT_CHARACTER = Buffer.from([0xef, 0xbf, 0xbd]);

/** `index`, moved back by one when it falls inside a surrogate pair: a cut there never halves a character. */
export function surrogateSafeIndex(text: string, index: number): number {
  const high = text.charCodeAt(index - 1);
  const low = text.charCodeAt(index);
  return index > 0 && high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff ? index - 1 : index;
}

/**
 * `text` as UTF-8, or `null` when it holds a lone surrogate (which the encoder would silently turn
 * into U+FFFD). The exact check (native `isWellFormed`, Node 20+; the lib target is ES2023) runs
 * only when the bytes hold U+FFFD at all: the common case costs one byte search.
 */
export function encodeWellFormed(text: string): Uint8Array | null {
  const bytes = encoder.encode(text);
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const wellFormed = () => (text as string & { isWellFormed(): boolean }).isWellFormed();
  return view.indexOf(REPLACEMENT_CHARACTER) !== -1 && !wellFormed() ? null : bytes;
}

/** The bytes as UTF-8 text, or `null` when they are not valid UTF-8. */
export function decodeUtf8(bytes: Uint8Array): string | null {
  try {
    return strictDecoder.decode(bytes);
  } catch {
    return null;
  }
}

/** UTF-8 JSON as a value, or `undefined` when the bytes are not UTF-8 JSON (which no schema accepts). */
export function parseJson(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes)); // a BOM is skipped
  } catch {
    return undefined;
  }
}
