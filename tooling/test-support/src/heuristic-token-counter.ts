// Classes of the ASCII characters, looked up once per character.
const CONTROL = 0;
const LOWER = 1;
const UPPER = 2;
const DIGIT = 3;
const SPACE = 4;
const NEWLINE = 5;
const MARK = 6;
// Everything at or above U+0080; never stored in the table, returned by `classOf`.
const NON_ASCII = 7;

const ASCII_CLASS = new Uint8Array(128);
for (let code = 0; code < 128; code++) {
  let kind = MARK;
  if (code >= 97 && code <= 122) kind = LOWER;
  else if (code >= 65 && code <= 90) kind = UPPER;
  else if (code >= 48 && code <= 57) kind = DIGIT;
  else if (code === 32 || code === 9) kind = SPACE;
  else if (code === 10 || code === 13) kind = NEWLINE;
  else if (code < 32 || code === 127) kind = CONTROL;
  ASCII_CLASS[code] = kind;
}

function classOf(text: string, index: number): number {
  const code = text.charCodeAt(index);
  return code < 128 ? ASCII_CLASS[code]! : NON_ASCII;
}

/**
 * Tokens per UTF-16 code unit outside ASCII, by script, measured against o200k_base: CJK and
 * kana cost close to a token per character, which `chars / 4` undercounts three- to fourfold.
 */
function nonAsciiWeight(code: number): number {
  if (code >= 0xd800 && code <= 0xdfff) return 0.75; // half of an astral character (emoji: ~1.5 tokens)
  if (code < 0x0300) return 0.45; // Latin-1 and Latin Extended
  if (code < 0x0530) return 0.3; // Greek, Cyrillic
  if (code < 0x0900) return 0.4; // Hebrew, Arabic
  if (code < 0x0e00) return 0.6; // Indic scripts
  if (code >= 0x3040 && code < 0x3100) return 0.75; // kana
  if (code >= 0x4e00 && code < 0xa000) return 0.75; // CJK ideographs
  if (code >= 0xac00 && code < 0xd7b0) return 0.65; // Hangul
  return 0.8;
}

/**
 * For tests and benches: a counter that loads no vocabulary and costs little, so that a test of
 * something else does not pay for exact counts (hot-state counts exactly, with gpt-tokenizer).
 * A cheap token estimate that follows the o200k_base pre-tokenizer instead of dividing by four:
 * words split at lower→upper case changes, digits in groups of three (so hex ids cost what they
 * really cost), runs of marks such as `":"` at about two characters a token with the last one
 * joining the next word, and a per-script weight for CJK, Hangul, Cyrillic and emoji. Within
 * about 15 % of the exact count on prose, code, JSON, hex ids and CJK; random base64 is
 * undercounted by about a third. Tens of times faster than the exact tokenizer.
 */
export function countTokensHeuristic(text: string): number {
  let tokens = 0;
  let nonAscii = 0;
  const length = text.length;
  let i = 0;
  while (i < length) {
    const kind = classOf(text, i);
    const start = i;
    i++;
    switch (kind) {
      case NON_ASCII:
        nonAscii += nonAsciiWeight(text.charCodeAt(start));
        break;
      case LOWER:
      case UPPER: {
        let previous = kind;
        // `fooBar` is two pieces; `HTTPServer` and `Foo` stay one piece each.
        while (i < length) {
          const next = classOf(text, i);
          if (next !== LOWER && (next !== UPPER || previous !== UPPER)) break;
          previous = next;
          i++;
        }
        const run = i - start;
        tokens += run <= 7 ? 1 : 2 + ((run - 4) >> 3);
        break;
      }
      case DIGIT:
        while (i < length && classOf(text, i) === DIGIT) i++;
        tokens += Math.ceil((i - start) / 3);
        break;
      case SPACE:
        while (i < length && classOf(text, i) === SPACE) i++;
        // A single space joins the word after it; a longer run (indentation) is a token of its own.
        if (i - start > 1) tokens += 1;
        break;
      case NEWLINE:
        while (i < length && (classOf(text, i) === NEWLINE || classOf(text, i) === SPACE)) i++;
        tokens += 1;
        break;
      default: {
        while (i < length && (classOf(text, i) === MARK || classOf(text, i) === CONTROL)) i++;
        let run = i - start;
        const next = i < length ? classOf(text, i) : CONTROL;
        // The last mark before a word joins it (`"session`, `.ts`), as the pre-tokenizer does.
        if (next === LOWER || next === UPPER || next === NON_ASCII) run--;
        tokens += (run + 1) >> 1;
      }
    }
  }
  return tokens + Math.ceil(nonAscii);
}
