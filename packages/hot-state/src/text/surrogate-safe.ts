const isHighSurrogate = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;
const isLowSurrogate = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff;

/**
 * `index` moved back by one when it falls between the two halves of a surrogate pair, so that
 * `text.slice(0, index)` and `text.slice(index)` never hold half a character.
 */
export function surrogateSafeIndex(text: string, index: number): number {
  if (
    index > 0 &&
    index < text.length &&
    isHighSurrogate(text.charCodeAt(index - 1)) &&
    isLowSurrogate(text.charCodeAt(index))
  ) {
    return index - 1;
  }
  return index;
}

type WellFormedCheck = { isWellFormed(): boolean };

/**
 * False when `text` holds a lone surrogate. The native `String.prototype.isWellFormed` (Node 20+)
 * is several times faster than core's regex-based `isWellFormedUnicode` on large texts, which
 * matters when every bootstrap file is checked.
 */
export function isWellFormedText(text: string): boolean {
  return (text as string & WellFormedCheck).isWellFormed();
}
