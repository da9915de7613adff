import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compareUtf8 } from "../src/utf8.js";

describe("utf8", () => {
  it("compareUtf8 agrees with a byte comparison of the UTF-8 encodings", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), fc.string({ unit: "grapheme" }), (a, b) => {
        const bytes = Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b)));
        expect(Math.sign(compareUtf8(a, b))).toBe(bytes);
      }),
      { numRuns: 2000 },
    );
    // The case JavaScript's own `<` gets wrong: U+E000 sorts before U+1F600 in UTF-8.
    expect("\u{1f600}" < "\ue000").toBe(true);
    expect(compareUtf8("\ue000", "\u{1f600}")).toBeLessThan(0);
  });
});
