/** A piece cut from a string, with its UTF-8 length. */
export interface Utf8Cut {
  text: string;
  bytes: number;
}

const isHigh = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;
const isLow = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff;

// UTF-8 size of the code unit at `unit` when it is not part of a pair: a lone surrogate encodes as
// U+FFFD (3 bytes), as TextEncoder and Buffer do.
const unitBytes = (unit: number) => (unit < 0x80 ? 1 : unit < 0x800 ? 2 : 3);

/**
 * The longest prefix of `text` whose UTF-8 encoding is at most `maxBytes`, never splitting a code
 * point: its encoding is a byte prefix of the encoding of `text`.
 */
export function utf8Head(text: string, maxBytes: number): Utf8Cut {
  let bytes = 0;
  let index = 0;
  while (index < text.length) {
    const unit = text.charCodeAt(index);
    const pair = isHigh(unit) && index + 1 < text.length && isLow(text.charCodeAt(index + 1));
    const size = pair ? 4 : unitBytes(unit);
    if (bytes + size > maxBytes) break;
    bytes += size;
    index += pair ? 2 : 1;
  }
  return { text: text.slice(0, index), bytes };
}

/**
 * The longest suffix of `text` whose UTF-8 encoding is at most `maxBytes`, never splitting a code
 * point: its encoding is a byte suffix of the encoding of `text`.
 */
export function utf8Tail(text: string, maxBytes: number): Utf8Cut {
  let bytes = 0;
  let index = text.length;
  while (index > 0) {
    const unit = text.charCodeAt(index - 1);
    const pair = isLow(unit) && index >= 2 && isHigh(text.charCodeAt(index - 2));
    const size = pair ? 4 : unitBytes(unit);
    if (bytes + size > maxBytes) break;
    bytes += size;
    index -= pair ? 2 : 1;
  }
  return { text: text.slice(index), bytes };
}
