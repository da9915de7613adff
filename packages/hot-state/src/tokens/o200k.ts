import { createRequire } from "node:module";
import type { Steps } from "@stowage/core";

type Encoding = typeof import("gpt-tokenizer/encoding/o200k_base");

/**
 * The longest pre-tokenized piece counted: gpt-tokenizer merges a piece in time quadratic in its
 * length (8,000 CJK characters take about a second); real agent transcripts have none over 80.
 */
export const MAX_PIECE_CHARS = 1_024;
/** o200k_base's longest token is 128 bytes (128 spaces): n UTF-16 units are at least n / 128 tokens. */
const LONGEST_TOKEN_CHARS = 128;
/** Characters per tokenizer call (about 1 ms); a count bounded by a budget takes twice its tokens. */
const CHUNK_CHARS = 8 * 1024;
/** A run of one class this long may make a piece over {@link MAX_PIECE_CHARS} (with a unit on each side). */
const LONG_RUN = (MAX_PIECE_CHARS - 2) >> 1;
/** Windows a run of {@link LONG_RUN} is sure to cover one of. */
const RUN_WINDOW = (LONG_RUN + 1) >> 1;
/**
 * gpt-tokenizer's merge cache (100,000 pieces) evicts through `map.keys().next()`, walking every
 * entry deleted before: once full, 1 MiB of distinct words took 15 s, not 1 s. Emptied before then.
 */
const MERGE_CACHE_PIECES = 100_000;
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };
const NON_SPACE = /\S/u;

/** Pieces the merge cache may hold at most: counted since it was last emptied. */
let cachedAtMost = 0;
let encoding:
  | { countTokens: Encoding["countTokens"]; clearMergeCache: () => void; split: RegExp }
  | undefined;

/** gpt-tokenizer's o200k_base encoding, loaded on first use: its vocabulary takes a few hundred ms. */
function o200k() {
  if (encoding) return encoding;
  const require = createRequire(import.meta.url);
  const { countTokens, clearMergeCache } = require("gpt-tokenizer/encoding/o200k_base") as Encoding;
  const constants = require("gpt-tokenizer/encodingParams/constants") as { O200K_TOKEN_SPLIT_REGEX: RegExp };
  encoding = { countTokens, clearMergeCache, split: constants.O200K_TOKEN_SPLIT_REGEX };
  return encoding;
}

// Classes of a UTF-16 unit, as bits: what runs it continues (BREAK: `\r`, `\n`, `/`, which may end punctuation).
const [LETTER, DIGIT, SPACE, BREAK, MARK] = [1, 2, 4, 8, 16];
const APOSTROPHE = 0x27;
const SPACES = [0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff];
/** Blocks as [first, last, first, last, …]. */
const LETTER_BLOCKS = [0xc0, 0x52f, 0x3041, 0x3096, 0x30a1, 0x30fa, 0x4e00, 0x9fff, 0xac00, 0xd7a3];
const MARK_BLOCKS = [0x2010, 0x205e, 0x3001, 0x3003, 0x3008, 0x3011, 0xff01, 0xff0f, 0xff1a, 0xff20];
const within = (blocks: number[], code: number) =>
  blocks.some((first, i) => i % 2 === 0 && code >= first && code <= blocks[i + 1]!);

/**
 * The class of a UTF-16 unit at or above U+0080. Blocks known to hold only letters (Latin,
 * Cyrillic, kana, CJK ideographs, Hangul) or only punctuation (general, CJK and fullwidth
 * punctuation); any other unit may be either, so it continues both runs.
 */
function wideClass(code: number): number {
  if (SPACES.includes(code) || (code >= 0x2000 && code <= 0x200a)) return SPACE;
  if (code !== 0xd7 && code !== 0xf7 && within(LETTER_BLOCKS, code)) return LETTER;
  return within(MARK_BLOCKS, code) ? MARK : LETTER | MARK;
}

/** The class of every UTF-16 unit, built on the first count. */
let unitClasses: Uint8Array | undefined;
const classesOf = () =>
  (unitClasses ??= Uint8Array.from({ length: 0x10000 }, (_, code) => {
    if (code >= 128) return wideClass(code);
    if (code === 10 || code === 13) return SPACE | BREAK;
    if (code === 47) return MARK | BREAK;
    if (code === 32 || (code >= 9 && code <= 13)) return SPACE;
    if (code >= 48 && code <= 57) return DIGIT;
    return (code >= 65 && code <= 90) || (code >= 97 && code <= 122) ? LETTER : MARK;
  }));

/**
 * Where the chunk from `start` ends, found without the regex: at the first space or punctuation
 * `size` on after a letter or digit (a piece ends there whatever follows), or at the end; and
 * whether an aligned window of {@link RUN_WINDOW} units is all one class (as a long run covers one).
 */
function chunkEnd(text: string, start: number, size: number): { end: number; longRun: boolean } {
  const classes = classesOf();
  let longRun = false;
  // The partial window before the first boundary is not judged: a long run covers a whole one.
  let window = 0;
  let i = start;
  for (; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const kind = classes[code]!;
    // After a unit known to be a letter or a digit (not one that may be either), a piece ends at
    // a space or at punctuation, except the apostrophe of a contraction (`it's` is one piece).
    if ((kind & SPACE || (kind === MARK && code !== APOSTROPHE)) && i - start >= size) {
      const before = classes[text.charCodeAt(i - 1)];
      if (before === LETTER || before === DIGIT) break;
    }
    window &= kind;
    if (i % RUN_WINDOW === RUN_WINDOW - 1) {
      if (window & (LETTER | MARK | SPACE | BREAK)) longRun = true;
      window = 0xff;
    }
  }
  return { end: i, longRun };
}

/**
 * `text` in chunks of about `size` cut where the pre-tokenizer's pieces do not depend on what
 * follows, so their counts add up to the whole's; `null` for a piece over {@link MAX_PIECE_CHARS}.
 * Only a chunk with a long run, or without a cut for 4 chunks, is split by the tokenizer's regex.
 */
function* chunksOf(text: string, split: RegExp, size: number): Generator<string | null, void, void> {
  for (let start = 0; start < text.length; ) {
    const { end, longRun } = chunkEnd(text, start, size);
    if (!longRun && end - start <= 4 * size) yield text.slice(start, end);
    else {
      const pieces = new RegExp(split.source, split.flags);
      pieces.lastIndex = start;
      for (let match = pieces.exec(text); match !== null && match.index < end; match = pieces.exec(text)) {
        const piece = match[0];
        if (piece.length > MAX_PIECE_CHARS) return yield null;
        const pieceEnd = match.index + piece.length;
        // After a piece holding a non-space the split goes on alike; after spaces it may not
        // (`\s+(?!\S)`). A long piece ends its chunk: one call never does two of the costly merges.
        if ((pieceEnd - start >= size || piece.length > 256) && NON_SPACE.test(piece)) {
          yield text.slice(start, pieceEnd);
          start = pieceEnd;
        }
      }
      if (start < end) yield text.slice(start, end);
    }
    start = end;
  }
}

/**
 * The o200k_base count of `text` (special-token markers as plain text) by gpt-tokenizer's own
 * `countTokens`, chunk by chunk, yielding between chunks: exact up to `max`, else some number over
 * it found without counting the rest; Infinity for a piece over {@link MAX_PIECE_CHARS}.
 */
export function* countO200kUpTo(text: string, max: number): Steps<number> {
  if (text.length > LONGEST_TOKEN_CHARS * max) return Math.ceil(text.length / LONGEST_TOKEN_CHARS);
  const { countTokens, clearMergeCache, split } = o200k();
  let count = 0;
  for (const chunk of chunksOf(text, split, Math.min(CHUNK_CHARS, Math.max(1_024, 2 * max)))) {
    if (chunk === null) return Number.POSITIVE_INFINITY;
    if (cachedAtMost + chunk.length > MERGE_CACHE_PIECES) {
      clearMergeCache();
      cachedAtMost = 0;
    }
    const counted = countTokens(chunk, PLAIN_TEXT);
    cachedAtMost += Math.min(counted, chunk.length);
    count += counted;
    if (count > max) return count;
    yield;
  }
  return count;
}
