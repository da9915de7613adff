import { expectStowageError, seededRandom } from "@stowage/core/testing";
import { mainThreadCpuMs, realTranscripts } from "@stowage/test-support";
import { countTokens as o200k } from "gpt-tokenizer/encoding/o200k_base";
import { O200K_TOKEN_SPLIT_REGEX } from "gpt-tokenizer/encodingParams/constants";
import { Tiktoken } from "js-tiktoken/lite";
import o200kRanks from "js-tiktoken/ranks/o200k_base";
import { describe, expect, it } from "vitest";
import { buildHotState } from "../../src/hot-state/build-hot-state.js";
import { countTokensExact } from "../../src/tokens/token-counter.js";
import { CORPORA } from "../corpora.js";

const charsOver4 = (text: string) => Math.ceil(text.length / 4);

describe("exact token counter", () => {
  it("agrees with o200k_base", () => {
    for (const text of Object.values(CORPORA)) expect(countTokensExact(text)).toBe(o200k(text));
    expect(countTokensExact("")).toBe(0);
  });

  it("counts special-token markers as plain text instead of throwing", () => {
    const text = "before <|endoftext|> after <|im_start|>";
    expect(() => o200k(text)).toThrow(/special token/);
    expect(countTokensExact(text)).toBeGreaterThan(5);
  });

  it("refuses a non-string with INVALID_INPUT", async () => {
    for (const value of [42, null, undefined, ["a"], { text: "a" }]) {
      await expectStowageError(() => countTokensExact(value as unknown as string), "INVALID_INPUT");
    }
  });
});

// Counts that treat special-token markers as text, like countTokensExact.
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };
const tiktoken = new Tiktoken(o200kRanks);
const tiktokenCount = (text: string) => tiktoken.encode(text, [], []).length;

/** The longest unbroken run (pre-tokenized piece) counted, as the README gives it. */
const MAX_PIECE_CHARS = 1_024;
const longestPiece = (text: string) =>
  Math.max(0, ...Array.from(text.matchAll(O200K_TOKEN_SPLIT_REGEX), ([piece]) => piece.length));

/** Long unbroken runs: what the pre-tokenizer leaves as one piece. */
function longRuns(length: number, seed: number): Record<string, string> {
  const random = seededRandom(seed);
  const pick = (alphabet: string) =>
    Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join("");
  return {
    repeatedLetter: "a".repeat(length),
    repeatedWord: "session".repeat(Math.ceil(length / 7)).slice(0, length),
    randomLower: pick("abcdefghijklmnopqrstuvwxyz"),
    randomMixedCase: pick("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"),
    randomBase64: pick("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"),
    punctuation: pick("=-_*#~.:;!?<>[]{}()|\\\"'`^"),
    repeatedEquals: "=".repeat(length),
    spaces: " ".repeat(length),
    spacesThenWord: `${" ".repeat(length)}word`,
    newlines: "\n".repeat(length),
    accented: pick("éèàùçôîœæ"),
    cyrillic: pick("абвгдежзийклмнопрстуфхцчшщ"),
    cjk: pick("中文字符会话存储令牌计数"),
    emoji: pick("😀🎉🚀✨🔥"),
    mixedScripts: pick("aé中😀б"),
  };
}

describe("exact counting of long unbroken runs", () => {
  it("gives gpt-tokenizer's own count for every kind of run up to 1,024 characters, and refuses longer ones", async () => {
    let seed = 1;
    for (const length of [129, 200, 517, 1_000, 1_024, 1_025, 2_500]) {
      for (const [name, text] of Object.entries(longRuns(length, seed++))) {
        if (longestPiece(text) > MAX_PIECE_CHARS) {
          const err = await expectStowageError(() => countTokensExact(text), "TOO_LARGE", "RUN_TOO_LONG");
          expect(err.details).toEqual({ limit: MAX_PIECE_CHARS });
          continue;
        }
        expect({ name, length, count: countTokensExact(text) }).toEqual({
          name,
          length,
          count: o200k(text, PLAIN_TEXT),
        });
      }
    }
  });

  it("refuses 1 MiB of one unbroken run at once, without merging it (gpt-tokenizer would take hours)", async () => {
    for (const run of ["a", "=", " ", "中", "😀"]) {
      const started = mainThreadCpuMs();
      await expectStowageError(
        () => countTokensExact(`before ${run.repeat(1024 * 1024)} after`),
        "TOO_LARGE",
      );
      // A generous bound for a stall guard (this thread's CPU time, which a busy machine does not
      // stretch): merging the run would take hours.
      expect(mainThreadCpuMs() - started, "CPU ms").toBeLessThan(5_000);
    }
  });

  it.each([10, 35, 73, 181, 191])(
    "counts a long text of every kind of character in chunks, as gpt-tokenizer counts it whole (seed %i)",
    (seed) => {
      // Lone surrogates, CJK, emoji, \r\n, tabs, punctuation, special-token markers: every kind of
      // place a chunk could be cut. These seeds once had a chunk cut after a lone surrogate before a
      // line break, which split a piece in two (one token too many).
      const alphabet = "ab c\n\t  '.,;:=-_/\\\"AZ09é中😀\r<|endoftext|>";
      let state = seed;
      let text = "";
      for (let i = 0; i < 1 + ((seed * 7919) % 40_000); i++) {
        state = (Math.imul(state, 1103515245) + 12345) >>> 0;
        text += alphabet[state % alphabet.length];
      }
      expect(countTokensExact(text)).toBe(o200k(text, PLAIN_TEXT));
    },
  );

  it("gives the same count as js-tiktoken (OpenAI's port) on long runs inside prose", () => {
    const runs = longRuns(600, 99);
    const text = Object.values(runs).join(" and then some prose, 42 of it.\n");
    expect(countTokensExact(text)).toBe(tiktokenCount(text));
  });

  it("counts right past the capacity of gpt-tokenizer's merge cache (emptied before it fills)", () => {
    // 120,000 distinct words: more pieces than the cache holds (100,000).
    const word = (n: number) => {
      let letters = "";
      for (let rest = n + 26 * 27; rest > 0; rest = Math.floor(rest / 26))
        letters += "abcdefghijklmnopqrstuvwxyz"[rest % 26];
      return letters;
    };
    const text = Array.from({ length: 120_000 }, (_, n) => word(n)).join(" ");
    const expected = tiktokenCount(text);
    expect(countTokensExact(text)).toBe(expected);
    expect(countTokensExact(text)).toBe(expected);
  });

  const real = realTranscripts("hot-state exact token counts");
  it.skipIf(!real.present)(
    "gives the same count as js-tiktoken on every real transcript",
    () => {
      const files = real.files();
      expect(files.length).toBeGreaterThan(0);
      for (const file of files) {
        // The first 200 KB of each: js-tiktoken, the reference here, is slow on long pieces.
        const text = real.read(file).slice(0, 200_000);
        expect({ file, count: countTokensExact(text) }).toEqual({ file, count: tiktokenCount(text) });
      }
    },
    300_000,
  );
});

describe("chars / 4 is not an acceptable default", () => {
  it.each([
    ["hexIds", 2],
    ["json", 1.3],
    ["cjk", 2.5],
  ] as const)("chars/4 undercounts %s by at least %sx against the exact count", (name, factor) => {
    const text = CORPORA[name];
    expect(countTokensExact(text)).toBeGreaterThanOrEqual(charsOver4(text) * factor);
  });
});

describe("a counter fails closed", () => {
  it.each([
    [
      "throws",
      () => {
        throw new Error("tokenizer crashed");
      },
    ],
    ["returns NaN", () => Number.NaN],
    ["returns a negative count", () => -1],
    ["returns a fraction", () => 1.5],
    ["returns Infinity", () => Number.POSITIVE_INFINITY],
    ["returns a string", () => "12" as unknown as number],
    ["returns a promise", () => Promise.resolve(3) as unknown as number],
  ])("a counter that %s is BUDGET_EXCEEDED / UNMEASURABLE", async (_why, counter) => {
    await expectStowageError(
      () => buildHotState({ session_id: "s" }, { countTokens: counter as (text: string) => number }),
      "BUDGET_EXCEEDED",
      "UNMEASURABLE",
    );
  });

  it("passes a good count through", () => {
    expect(buildHotState({ session_id: "s" }, { countTokens: () => 7 }).tokens).toBe(7);
  });
});
