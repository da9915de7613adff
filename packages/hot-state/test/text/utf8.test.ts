import { describe, expect, it } from "vitest";
import { encodeWellFormed, surrogateSafeIndex } from "../../src/text/utf8.js";

describe("encodeWellFormed", () => {
  it.each([
    ["plain", "hello"],
    ["an astral character", "a😀b"],
    ["a real U+FFFD", "bad byte was \ufffd here"],
    ["empty", ""],
  ])("encodes %s text exactly", (_why, text) => {
    expect(new TextDecoder().decode(encodeWellFormed(text)!)).toBe(text);
  });

  it.each([
    ["a lone high surrogate", "a\ud800b"],
    ["a lone low surrogate at the end", "ab\udc00"],
    ["a lone surrogate next to a real U+FFFD", "\ufffd\ud800"],
    ["reversed halves", "\ude00\ud83d"],
  ])("refuses %s", (_why, text) => {
    expect(encodeWellFormed(text)).toBeNull();
  });
});

describe("surrogateSafeIndex", () => {
  it("moves a cut between the halves of a pair back to the pair", () => {
    const text = "a😀b";
    expect(surrogateSafeIndex(text, 2)).toBe(1);
    for (const index of [0, 1, 3, 4]) expect(surrogateSafeIndex(text, index)).toBe(index);
  });
});
