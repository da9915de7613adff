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
