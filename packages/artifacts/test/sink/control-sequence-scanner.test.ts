import { sanitizeText } from "@stowage/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  endOfOpenControlSequence,
  OUTSIDE_CONTROL_SEQUENCE,
  scanControlSequences,
} from "../../src/sink/control-sequence-scanner.js";

const ESC = "\u001b";
const utf8 = (text: string) => new TextEncoder().encode(text);

/** Where a reader that starts at `cut` (knowing only what came before) should begin to read `text`. */
function beginAfterCut(text: string, cut: string): number {
  const bytes = utf8(text);
  const at = utf8(text.slice(0, text.indexOf(cut) + cut.length)).byteLength;
  return endOfOpenControlSequence(bytes, scanControlSequences(bytes, OUTSIDE_CONTROL_SEQUENCE, 0, at), at);
}

/** The byte offset of `marker` in `text`. */
const offsetOf = (text: string, marker: string) => utf8(text.slice(0, text.indexOf(marker))).byteLength;

// [what, stream, the text right before the cut, where reading should begin]: by hand, from ECMA-48.
const ROWS: ReadonlyArray<[string, string, string, string]> = [
  ["a cut in plain text begins at the cut", "abcdef", "abc", "def"],
  ["a cut inside a CSI begins after its final byte", `abc${ESC}[1;31mred`, `${ESC}[1;`, "red"],
  ["a cut right after ESC begins after the sequence", `x${ESC}[0my`, `x${ESC}`, "y"],
  [
    "a cut deep inside a long OSC (an inline image) begins after its BEL",
    `${ESC}]1337;File=inline=1:${"QUJD".repeat(5000)}\u0007tail-visible\n`,
    "QUJDQUJD",
    "tail-visible",
  ],
  [
    "a cut inside an OSC ended by ST (ESC \\) begins after the ST",
    `${ESC}]8;;https://x.test/${"p".repeat(900)}${ESC}\\docs`,
    "pppp",
    "docs",
  ],
  [
    "a cut between the ESC and the backslash of an ST begins after it",
    `${ESC}]0;t${ESC}\\after`,
    `t${ESC}`,
    "after",
  ],
  ["an ESC inside an OSC that is not ST keeps the OSC open", `${ESC}]0;a${ESC}b\u0007after`, "a", "after"],
  [
    "a cut inside an unterminated OSC begins at the newline that ends it",
    `${ESC}]0;${"x".repeat(600)}\nnext`,
    "xxx",
    "\nnext",
  ],
  [
    "a cut inside an unterminated OSC begins at the carriage return that ends it",
    `${ESC}]0;${"x".repeat(600)}\r50%`,
    "xxx",
    "\r50%",
  ],
  ["a cut inside a DCS begins after it", `${ESC}Pq#0;2~~${ESC}\\after`, "#0;", "after"],
  ["a cut inside an 8-bit OSC begins after its 8-bit ST", `\u009d0;${"t".repeat(400)}\u009cok`, "tt", "ok"],
  ["a cut inside an 8-bit CSI begins after its final byte", "\u009b31mred", "\u009b3", "red"],
  ["Latin-1 text (0xC2 lead bytes) is not a sequence", "© ±°x", "© ", "±°x"],
  ["a cut inside a short ESC sequence begins after its final byte", `${ESC}(Bx`, `${ESC}(`, "x"],
];

describe("endOfOpenControlSequence after scanControlSequences", () => {
  it.each(ROWS)("%s", (_what, text, cut, begin) => {
    expect(beginAfterCut(text, cut)).toBe(offsetOf(text, begin));
  });

  it("runs to the end when the sequence does not end", () => {
    const bytes = utf8(`${ESC}]1337;${"A".repeat(1000)}`);
    const state = scanControlSequences(bytes, OUTSIDE_CONTROL_SEQUENCE, 0, 500);
    expect(state).not.toBe(OUTSIDE_CONTROL_SEQUENCE);
    expect(endOfOpenControlSequence(bytes, state, 500)).toBe(bytes.byteLength);
  });

  it("carries the state across pieces of a stream", () => {
    const pieces = [`pre${ESC}]0;ti`, "tle that goes", ` on\u0007post`].map(utf8);
    let state = OUTSIDE_CONTROL_SEQUENCE;
    for (const piece of pieces.slice(0, 2)) state = scanControlSequences(piece, state);
    expect(endOfOpenControlSequence(pieces[2]!, state)).toBe(4); // after " on" and the BEL
  });
});

describe("agreement with sanitizeText", () => {
  // Fragments (whole characters) that open, continue and end sequences in every form.
  const fragment = fc.constantFrom(
    "a",
    "é",
    "©",
    "日",
    "😀",
    "\n",
    "\r",
    "\t",
    " ",
    ";",
    "1",
    "m",
    "\\",
    "[",
    "]",
    ESC,
    `${ESC}[`,
    `${ESC}]`,
    `${ESC}P`,
    `${ESC}(`,
    `${ESC}\\`,
    "\u0007",
    "\u009b",
    "\u009d",
    "\u0090",
    "\u009c",
    "\u0085",
  );

  it("what is read from any cut (at a character boundary) sanitizes to the end of the whole text sanitized", () => {
    fc.assert(
      fc.property(fc.array(fragment, { maxLength: 40 }), (parts) => {
        const text = parts.join("");
        const whole = sanitizeText(text);
        const bytes = utf8(text);
        let state = OUTSIDE_CONTROL_SEQUENCE;
        let at = 0;
        for (const part of parts) {
          const begin = endOfOpenControlSequence(bytes, state, at);
          const rest = sanitizeText(new TextDecoder().decode(bytes.subarray(begin)));
          expect(whole.endsWith(rest)).toBe(true);
          const size = utf8(part).byteLength;
          state = scanControlSequences(bytes, state, at, at + size);
          at += size;
        }
      }),
      { numRuns: 3000 },
    );
  });
});
