import { createRequire } from "node:module";
import { countMergedParts, PairRankCache } from "./merge-count.js";

/** The parts of gpt-tokenizer's byte-pair core that counting uses (present since 2.x; checked on load). */
interface BytePairCore {
  tokenSplitRegex: RegExp;
  getBpeRankFromString(piece: string): number | undefined;
  getBpeRankFromBytes(bytes: Uint8Array): number | undefined;
  bytePairMerge(bytes: Uint8Array): number[];
}

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

let byteRanks: Int32Array | undefined;

/** The rank of each single byte (every byte is a token of a byte-level vocabulary). */
function singleByteRanks(bpe: BytePairCore): Int32Array {
  if (byteRanks) return byteRanks;
  const ranks = new Int32Array(256);
  for (let byte = 0; byte < 256; byte++) ranks[byte] = bpe.getBpeRankFromBytes(Uint8Array.of(byte)) ?? -1;
  byteRanks = ranks;
  return ranks;
}

function countLongPiece(bpe: BytePairCore, piece: string): number {
  const single = singleByteRanks(bpe);
  // Made on the first long piece: the pair ranks it learns serve every later one.
  pairCache ??= new PairRankCache();
  if (isAscii(piece)) {
    // One byte per character: the vocabulary's string keys are the piece's substrings.
    const rankOf = (start: number, end: number) =>
      end - start === 1 ? single[piece.charCodeAt(start)] : bpe.getBpeRankFromString(piece.slice(start, end));
    return countMergedParts(piece.length, rankOf, pairCache);
  }
  const bytes = encoder.encode(piece);
  const rankOf = (start: number, end: number) =>
    end - start === 1 ? single[bytes[start]!] : bpe.getBpeRankFromBytes(bytes.subarray(start, end));
  return countMergedParts(bytes.length, rankOf, pairCache);
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
  const bpe = o200kCore();
  let count = 0;
  for (const [piece] of text.matchAll(bpe.tokenSplitRegex)) {
    if (bpe.getBpeRankFromString(piece) !== undefined) count++;
    else if (piece.length <= LIBRARY_MERGE_MAX_CHARS) count += countShortPiece(bpe, piece);
    else count += countLongPiece(bpe, piece);
  }
  return count;
}
