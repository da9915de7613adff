// Exact token counting against what a user would pick instead (js-tiktoken), and on the texts that
// make byte-pair merging quadratic: one long unbroken run, which gpt-tokenizer merges in time
// quadratic in its length (64 KB of one word took 1.7-3.7 s, 200 KB 41 s: issue 17). hot-state
// counts runs up to 1,024 characters and refuses longer ones without merging them.

import { createRequire } from "node:module";
import type { BenchCase } from "@stowage/bench-kit";
import { clearMergeCache as clearEsmCache, countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { Tiktoken } from "js-tiktoken/lite";
import o200kRanks from "js-tiktoken/ranks/o200k_base";
import { countTokensExact } from "../src/index.js";

const MIB = 1024 * 1024;
// hot-state loads gpt-tokenizer through require: the merge cache it counts with is that module's.
const { clearMergeCache } = createRequire(import.meta.url)("gpt-tokenizer/encoding/o200k_base") as {
  clearMergeCache: () => void;
};
/** The longest run hot-state counts, as its README gives it. */
const MAX_PIECE_CHARS = 1_024;

function randomText(length: number, alphabet: string, seed: number): string {
  let state = seed;
  let text = "";
  for (let i = 0; i < length; i++) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    text += alphabet[state % alphabet.length];
  }
  return text;
}

const LONG_RUNS: Record<string, string> = {
  "one repeated letter": "a".repeat(MIB),
  "one long random word": randomText(MIB, "abcdefghijklmnopqrstuvwxyz", 7),
  "repeated '='": "=".repeat(MIB),
  spaces: " ".repeat(MIB),
};

export function tokenCountCases(mixedText: string): BenchCase[] {
  const tiktoken = new Tiktoken(o200kRanks);
  const cases: BenchCase[] = [
    {
      name: "countTokensExact vs js-tiktoken encode().length (512 KiB mixed text)",
      target: { kind: "speed", min: 1.0 },
      rounds: 9,
      units: { count: Buffer.byteLength(mixedText), label: "B" },
      ours: async () => countTokensExact(mixedText),
      baseline: async () => tiktoken.encode(mixedText, [], []).length,
    },
  ];
  // Many distinct short pieces: gpt-tokenizer's own merge cache evicts through `map.keys().next()`,
  // which made this text take 1.4 s, then 4.5 s once its cache was full; hot-state empties it first.
  const distinctPieces = randomText(MIB, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", 9);
  cases.push({
    name: "countTokensExact vs js-tiktoken encode().length (1 MiB of random mixed-case letters: 260,000 distinct short pieces)",
    target: { kind: "speed", min: 1.0 },
    rounds: 5,
    units: { count: MIB, label: "B" },
    ours: async () => countTokensExact(distinctPieces),
    baseline: async () => tiktoken.encode(distinctPieces, [], []).length,
  });
  // Random base64: short pieces (letters, digits and "+/" alternate), counted whole.
  const base64 = randomText(MIB, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", 8);
  cases.push({
    name: "countTokensExact vs js-tiktoken encode().length (1 MiB of random base64)",
    target: { kind: "speed", min: 1.0 },
    rounds: 5,
    units: { count: MIB, label: "B" },
    ours: async () => countTokensExact(base64),
    baseline: async () => tiktoken.encode(base64, [], []).length,
  });
  for (const [name, text] of Object.entries(LONG_RUNS)) {
    // Each side empties gpt-tokenizer's merge cache first: a count from the cache is not a merge.
    const longest = text.slice(0, MAX_PIECE_CHARS);
    cases.push({
      name: `countTokensExact of the longest run counted (1,024 characters), ${name}, vs gpt-tokenizer countTokens of it`,
      target: { kind: "time", max: 1.5 },
      rounds: 9,
      units: { count: 10 * MAX_PIECE_CHARS, label: "B" },
      ours: async () => {
        for (let i = 0; i < 10; i++) {
          clearMergeCache();
          countTokensExact(longest);
        }
      },
      baseline: async () => {
        for (let i = 0; i < 10; i++) {
          clearEsmCache(); // the same module loaded as ESM, with a cache of its own
          countTokens(longest);
        }
      },
    });
    const refused = text.slice(0, 8 * MAX_PIECE_CHARS);
    cases.push({
      name: `countTokensExact refusing 1 MiB, ${name} (under 0.2 s), vs gpt-tokenizer counting 8 KiB of it`,
      target: { kind: "time", max: 1 },
      maxOursMs: 200,
      rounds: 3,
      units: { count: MIB, label: "B" },
      ours: async () => {
        try {
          countTokensExact(text);
        } catch {
          return; // TOO_LARGE: a run over 1,024 characters is not counted
        }
        throw new Error(`a 1 MiB run (${name}) was counted`);
      },
      baseline: async () => {
        clearEsmCache();
        countTokens(refused);
      },
    });
  }
  return cases;
}
