// Exact token counting against what a user would pick instead (js-tiktoken) and on the texts that
// made byte-pair merging quadratic: one long unbroken run of 1 MiB, against the same text cut into
// 16 pieces of 64 KiB (a linear count takes the same time for both). Before the heap-ordered
// merge, 64 KB of one word took 1.7-3.7 s and 200 KB 41 s (issue 17).
import type { BenchCase } from "@stowage/bench-kit";
import { Tiktoken } from "js-tiktoken/lite";
import o200kRanks from "js-tiktoken/ranks/o200k_base";
import { countTokensExact } from "../src/index.js";

const MIB = 1024 * 1024;
const PIECE = 64 * 1024;

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
  "random base64": randomText(MIB, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", 8),
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
  // which made this text take 1.4 s, then 4.5 s once its cache was full; hot-state keeps its own.
  const distinctPieces = randomText(MIB, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", 9);
  cases.push({
    name: "countTokensExact vs js-tiktoken encode().length (1 MiB of random mixed-case letters: 260,000 distinct short pieces)",
    target: { kind: "speed", min: 1.0 },
    rounds: 5,
    units: { count: MIB, label: "B" },
    ours: async () => countTokensExact(distinctPieces),
    baseline: async () => tiktoken.encode(distinctPieces, [], []).length,
  });
  for (const [name, text] of Object.entries(LONG_RUNS)) {
    const pieces = Array.from({ length: MIB / PIECE }, (_, i) => text.slice(i * PIECE, (i + 1) * PIECE));
    cases.push({
      name: `countTokensExact of 1 MiB, ${name} (under 1 s: above 1 MiB/s) vs 16 counts of 64 KiB of it`,
      // n log n within one run: 16 times the length may cost log(2^20) / log(2^16) = 1.25 times
      // more per byte, and a larger heap misses the CPU cache more often.
      target: { kind: "time", max: 2 },
      maxOursMs: 1000,
      rounds: 5,
      units: { count: MIB, label: "B" },
      ours: async () => countTokensExact(text),
      baseline: async () => {
        for (const piece of pieces) countTokensExact(piece);
      },
    });
  }
  return cases;
}
