import { sanitizeText } from "@stowage/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { clip, firstLine, firstLineOfClean, oneLine, oneLineOfClean } from "../../src/builders/brief-text.js";

// What oneLine is specified to give, written the slow and obvious way: sanitize a prefix of four
// times the length, fold every whitespace run to one space, trim, then cut.
function oneLineSpec(text: string, max: number): string {
  const window = max * 4;
  const folded = sanitizeText(text.slice(0, window)).replace(/\s+/g, " ").trim();
  return text.length > window && folded.length <= max ? `${folded}…` : clip(folded, max);
}

const EMOJI = "😀";

// Texts chosen for the edges of folding and cutting: every kind of white space `\s` matches,
// runs at both ends, pieces that end exactly at the limit, a pair cut by the window, hostile bytes.
const TEXTS: Record<string, string> = {
  empty: "",
  "only spaces": "   \n\t  ",
  "one word": "word",
  "a sentence": "I need to look at the parser first.",
  "leading and trailing runs": "  \n  Considering the request  \n\n",
  "newlines and tabs inside": "first line\nsecond\tline\r\nthird\u000bline\u000cend",
  "unicode spaces": "a\u00a0b\u1680c\u2000d\u200ae\u2028f\u2029g\u202fh\u205fi\u3000j\ufeffk",
  "double spaces": "a  b   c    d",
  "space at the limit": `${"x".repeat(9)} ${"y".repeat(20)}`,
  "word across the limit": `${"x".repeat(7)} ${"y".repeat(20)}`,
  "exactly the limit": "x".repeat(10),
  "one over the limit": "x".repeat(11),
  "long text, short fold": `${" ".repeat(60)}short`,
  "long text past the window": `${"word ".repeat(30)}`,
  "long text folding to the limit": `${"a\n\n\n".repeat(10)}${"b".repeat(40)}`,
  "emoji at the cut": `${"x".repeat(9)}${EMOJI}${"y".repeat(10)}`,
  "pair cut by the window": `${" ".repeat(37)}ab${EMOJI}rest`,
  "escape sequences and controls": "\u001b[31mred\u001b[0m\u0000 bell\u0007 \u200bhidden\u202e",
  "lone surrogate": "a\ud800b  c",
};

describe("oneLine", () => {
  for (const [name, text] of Object.entries(TEXTS)) {
    it(`${name}: gives what folding the whole window gives`, () => {
      expect(oneLine(text, 10)).toBe(oneLineSpec(text, 10));
      expect(oneLine(text, 120)).toBe(oneLineSpec(text, 120));
    });
    it(`${name}: of the sanitized text, oneLineOfClean gives the same without a second scan`, () => {
      const clean = sanitizeText(text);
      expect(oneLineOfClean(clean, 10)).toBe(oneLineSpec(clean, 10));
      expect(oneLineOfClean(clean, 120)).toBe(oneLineSpec(clean, 120));
    });
  }

  it("a hand-checked case: runs folded, ends trimmed, cut with an ellipsis", () => {
    expect(oneLine("  Look at\n\n the   parser first  ", 11)).toBe("Look at the…");
    expect(oneLine("  Look at\n\n the   parser  ", 120)).toBe("Look at the parser");
  });
});

describe("firstLineOfClean", () => {
  for (const [name, text] of Object.entries(TEXTS)) {
    it(`${name}: the first line of sanitized text, as firstLine gives it`, () => {
      const clean = sanitizeText(text);
      expect(firstLineOfClean(clean)).toBe(firstLine(clean));
    });
  }

  it("a surrogate pair cut by the 480-unit slice becomes U+FFFD, as sanitizing the slice makes it", () => {
    const text = `${" ".repeat(477)}ab${EMOJI}cd`;
    expect(firstLine(text)).toBe("ab\ufffd");
    expect(firstLineOfClean(text)).toBe("ab\ufffd");
  });
});

describe("any text (property)", () => {
  // Pieces for the edges: every kind of white space, runs of it, words, pairs, lone halves,
  // controls, invisible characters and selectors.
  const piece = fc.constantFrom(
    " ",
    "  ",
    "\n",
    "\r\n",
    "\t",
    "\u00a0",
    "\u2028",
    "\u3000",
    "\ufeff",
    "word",
    "x",
    "é",
    "😀",
    "\ud83d",
    "\ude00",
    "\u001b[31m",
    "\u0007",
    "\u200b",
    "\ufe0f",
  );
  const text = fc.array(piece, { maxLength: 80 }).map((pieces) => pieces.join(""));

  it("oneLine and oneLineOfClean give what the spec gives; firstLineOfClean what firstLine gives", () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 1, max: 40 }), (raw, max) => {
        expect(oneLine(raw, max)).toBe(oneLineSpec(raw, max));
        const clean = sanitizeText(raw);
        expect(oneLineOfClean(clean, max)).toBe(oneLineSpec(clean, max));
        expect(firstLineOfClean(clean)).toBe(firstLine(clean));
      }),
      { numRuns: 2000 },
    );
  });
});
