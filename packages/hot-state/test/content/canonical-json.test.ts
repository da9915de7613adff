import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { canonicalJson, MAX_JSON_DEPTH } from "../../src/content/canonical-json.js";

describe("canonicalJson", () => {
  it("sorts keys at every level and drops whitespace", () => {
    const a = { b: 1, a: { d: [3, { z: true, y: null }], c: "x" } };
    const b = { a: { c: "x", d: [3, { y: null, z: true }] }, b: 1 };
    expect(canonicalJson(a)).toBe('{"a":{"c":"x","d":[3,{"y":null,"z":true}]},"b":1}');
    expect(canonicalJson(b)).toBe(canonicalJson(a));
  });

  it("prints numbers and strings as JSON.stringify does, and keeps array order", () => {
    expect(canonicalJson([1e21, 0.1, -0, 5, "é\n😀", "\u2028"])).toBe(
      JSON.stringify([1e21, 0.1, 0, 5, "é\n😀", "\u2028"]),
    );
    expect(canonicalJson([2, 1])).not.toBe(canonicalJson([1, 2]));
  });

  it("sorts keys by UTF-16 code units (RFC 8785)", () => {
    expect(canonicalJson({ "\u{1F600}": 1, "\uFB01": 2, a: 3 })).toBe('{"a":3,"😀":1,"ﬁ":2}');
  });

  it("omits undefined properties like JSON.stringify and accepts null-prototype objects", () => {
    expect(canonicalJson({ a: 1, b: undefined })).toBe('{"a":1}');
    const bare = Object.assign(Object.create(null) as object, { k: "v" });
    expect(canonicalJson(bare)).toBe('{"k":"v"}');
  });

  const circular: Record<string, unknown> = {};
  circular.self = circular;
  let deep: unknown = 1;
  for (let i = 0; i <= MAX_JSON_DEPTH; i++) deep = [deep];

  it.each([
    [undefined, "undefined"],
    [Number.NaN, "NaN"],
    [Number.POSITIVE_INFINITY, "Infinity"],
    [10n, "a bigint"],
    [() => 1, "a function"],
    [Symbol("s"), "a symbol"],
    [[1, undefined], "undefined in an array"],
    // biome-ignore lint/suspicious/noSparseArray: a hole is the case under test
    [[1, , 3], "a hole in an array"],
    [new Date(0), "a Date"],
    [new Map([["a", 1]]), "a Map"],
    [{ a: new Uint8Array(2) }, "bytes"],
    [circular, "a cycle"],
    [deep, "nesting deeper than the limit"],
    [{ "bad\ud800": 1 }, "a lone surrogate in a key"],
    [["bad\udc00"], "a lone surrogate in a string"],
  ])("refuses %s (%s) with INVALID_INPUT", async (value, _why) => {
    await expectStowageError(() => canonicalJson(value), "INVALID_INPUT");
  });

  it("names the path of the bad value", async () => {
    const err = await expectStowageError(() => canonicalJson({ a: [{ b: Number.NaN }] }), "INVALID_INPUT");
    expect(err.details).toEqual({ path: "$.a[0].b" });
  });

  it("accepts the same object twice when it is not a cycle", () => {
    const shared = { x: 1 };
    expect(canonicalJson({ a: shared, b: shared })).toBe('{"a":{"x":1},"b":{"x":1}}');
  });
});
