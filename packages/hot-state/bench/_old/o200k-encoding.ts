import { createRequire } from "node:module";
import { mergedPartsInSlices, PairRankCache } from "./merge-count.js";

/** The parts of gpt-tokenizer's byte-pair core that counting uses (present since 2.x; checked on load). */
interface BytePairCore {
  tokenSplitRegex: RegExp;
  getBpeRankFromString(piece: string): number | undefined;
  getBpeRankFromBytes(bytes: Uint8Array): number | undefined;
  bytePairMerge(bytes: Uint8Array): number[];
  /** Each token's text (a string) or bytes, by rank: where the longest token is measured. */
  bytePairRankDecoder?: readonly (string | readonly number[] | undefined)[];
}

/** Characters of pieces counted between two pauses of {@link countO200kTokensUpTo}. */
const CHARS_PER_SLICE = 8 * 1024;

/**
 * Pieces up to this many UTF-16 units go through gpt-tokenizer's own merge; longer ones, which
 * only runs without a break produce (a long word, repeated characters, punctuation), through
 * {@link countMergedParts}, which gives the same count in O(n log n).
 */
const LIBRARY_MERGE_MAX_CHARS = 128;
/**
 * Short pieces whose count is remembered. Not gpt-tokenizer's own cache (`bytePairEncode`'s): it
 * evicts its oldest entry through `map.keys().next()`, which walks past every entry deleted
 * before it, so text of many distinct pieces (1 MiB of random mixed-case letters) took 1.4 s,
 * then 4.5 s once the cache was full. This one is emptied when full: one cheap step, and a text's
 * frequent pieces are back in it after a few lines.
 */
const PIECE_COUNT_CACHE_SIZE = 100_000;
const pieceCounts = new Map<string, number>();

const encoder = new TextEncoder();

let core: BytePairCore | undefined;
let pairCache: PairRankCache | undefined;

/**
 * gpt-tokenizer's o200k_base encoding, loaded on first use: its vocabulary takes a few hundred
 * milliseconds to load, which an app that counts with a heuristic (or not at all) never pays.
 */
function o200kCore(): BytePairCore {
  if (core) return core;
  const require = createRequire(import.meta.url);
  const api = require("gpt-tokenizer/encoding/o200k_base").default as {
    bytePairEncodingCoreProcessor?: BytePairCore;
  };
  const loaded = api?.bytePairEncodingCoreProcessor;
  if (
    !(loaded?.tokenSplitRegex instanceof RegExp) ||
    typeof loaded.getBpeRankFromString !== "function" ||
    typeof loaded.getBpeRankFromBytes !== "function" ||
    typeof loaded.bytePairMerge !== "function"
  ) {
    throw new Error(
      "gpt-tokenizer's o200k_base encoding does not have the shape this version of hot-state counts with",
    );
  }
  core = loaded;
  return core;
}

const isAscii = (text: string) => {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
};

let longestToken: number | undefined;

/**
 * UTF-8 bytes of the vocabulary's longest token (128 in o200k_base: 128 spaces). A text of n
 * UTF-16 units has at least n bytes, so at least n / this many tokens: a text far over a budget
 * is known to be over it without counting it. Infinity (no such bound) when the vocabulary cannot
 * be read.
 */
function longestTokenBytes(bpe: BytePairCore): number {
  if (longestToken !== undefined) return longestToken;
  let longest = 0;
  const decoder = bpe.bytePairRankDecoder;
  if (!Array.isArray(decoder)) {
    longestToken = Number.POSITIVE_INFINITY;
    return longestToken;
  }
  for (const token of decoder) {
    // A string token's UTF-8 bytes: at most 3 a UTF-16 unit, so only a long one is encoded.
    const bytes =
      typeof token !== "string"
        ? (token?.length ?? 0)
        : token.length * 3 <= longest
          ? 0
          : encoder.encode(token).length;
    if (bytes > longest) longest = bytes;
  }
  longestToken = longest > 0 ? longest : Number.POSITIVE_INFINITY;
  return longestToken;
}

/** Tokens a text of `units` UTF-16 units has at least: no token is longer than the longest. */
const fewestTokens = (bpe: BytePairCore, units: number) => Math.ceil(units / longestTokenBytes(bpe));

let byteRanks: Int32Array | undefined;

/** The rank of each single byte (every byte is a token of a byte-level vocabulary). */
function singleByteRanks(bpe: BytePairCore): Int32Array {
  if (byteRanks) return byteRanks;
  const ranks = new Int32Array(256);
  for (let byte = 0; byte < 256; byte++) ranks[byte] = bpe.getBpeRankFromBytes(Uint8Array.of(byte)) ?? -1;
  byteRanks = ranks;
  return ranks;
}

function countLongPiece(bpe: BytePairCore, piece: string): Generator<void, number, void> {
  const single = singleByteRanks(bpe);
  // Made on the first long piece: the pair ranks it learns serve every later one.
  pairCache ??= new PairRankCache();
  if (isAscii(piece)) {
    // One byte per character: the vocabulary's string keys are the piece's substrings.
    const rankOf = (start: number, end: number) =>
      end - start === 1 ? single[piece.charCodeAt(start)] : bpe.getBpeRankFromString(piece.slice(start, end));
    return mergedPartsInSlices(piece.length, rankOf, pairCache);
  }
  const bytes = encoder.encode(piece);
  const rankOf = (start: number, end: number) =>
    end - start === 1 ? single[bytes[start]!] : bpe.getBpeRankFromBytes(bytes.subarray(start, end));
  return mergedPartsInSlices(bytes.length, rankOf, pairCache);
}

function countShortPiece(bpe: BytePairCore, piece: string): number {
  const known = pieceCounts.get(piece);
  if (known !== undefined) return known;
  const count = bpe.bytePairMerge(encoder.encode(piece)).length;
  if (pieceCounts.size >= PIECE_COUNT_CACHE_SIZE) pieceCounts.clear();
  pieceCounts.set(piece, count);
  return count;
}

/**
 * The o200k_base token count of `text` with special-token markers counted as the plain text they
 * are: the same pre-tokenizer and the same merges as gpt-tokenizer's `countTokens`, so the same
 * number, in time linear in the text (n log n within a single unbroken run).
 */
export function countO200kTokens(text: string): number {
  const steps = countO200kTokensUpTo(text, Number.POSITIVE_INFINITY);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * {@link countO200kTokens} for a budget check: the exact count when it is at most `max`;
 * otherwise some number over `max`, found without counting the rest (a text, or one long piece of
 * it, too long to fit in `max` tokens of the longest size is not counted at all), so the work is
 * bounded by `max`, not by the text. Pauses (yields) between slices of about
 * {@link CHARS_PER_SLICE} characters and within a long piece's merges, so that a caller can let
 * other work run.
 */
export function* countO200kTokensUpTo(text: string, max: number): Generator<void, number, void> {
  const bpe = o200kCore();
  const bounded = max !== Number.POSITIVE_INFINITY;
  const atLeast = bounded ? fewestTokens(bpe, text.length) : 0;
  if (atLeast > max) return atLeast;
  let count = 0;
  let sincePause = 0;
  for (const [piece] of text.matchAll(bpe.tokenSplitRegex)) {
    if (bpe.getBpeRankFromString(piece) !== undefined) count++;
    else if (piece.length <= LIBRARY_MERGE_MAX_CHARS) count += countShortPiece(bpe, piece);
    else if (bounded && count + fewestTokens(bpe, piece.length) > max) {
      return count + fewestTokens(bpe, piece.length);
    } else {
      count += yield* countLongPiece(bpe, piece);
    }
    if (count > max) return count;
    sincePause += piece.length;
    if (sincePause >= CHARS_PER_SLICE) {
      sincePause = 0;
      yield;
    }
  }
  return count;
}
