const encoder = new TextEncoder();

/** UTF-8 length of a string without allocating its encoding. */
export function utf8ByteLength(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3; // a lone surrogate encodes as U+FFFD
    } else bytes += 3;
  }
  return bytes;
}

export function utf8Encode(text: string): Uint8Array {
  return encoder.encode(text);
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** False when the string holds a lone surrogate, which has no UTF-8 encoding. */
export function isWellFormedUnicode(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}

// Maps a UTF-16 code unit so that plain numeric comparison follows code point order, which is
// UTF-8 byte order: surrogates (U+10000 and up) must sort after U+E000–U+FFFF.
function codePointOrderUnit(unit: number): number {
  if (unit >= 0xd800 && unit <= 0xdfff) return unit + 0x2000;
  if (unit >= 0xe000) return unit - 0x800;
  return unit;
}

/**
 * Compare two strings in UTF-8 byte order, the order S3 and PostgreSQL's "C" collation list
 * keys in. JavaScript's `<` compares UTF-16 code units, which disagrees above U+E000.
 */
export function compareUtf8(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointOrderUnit(x) - codePointOrderUnit(y);
  }
  return a.length - b.length;
}
