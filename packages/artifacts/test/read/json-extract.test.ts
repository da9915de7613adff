import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import {
  extractJson,
  formatSteps,
  MAX_JSON_PATH_STEPS,
  MAX_QUERY_LENGTH,
  parseJsonQuery,
  pathSteps,
} from "../../src/read/json-extract.js";

const doc = {
  a: { b: [10, { c: "deep" }, null] },
  "key with space": 1,
  'quote"d': 2,
  list: [],
  nothing: null,
  "0": "zero key",
};

describe("parseJsonQuery", () => {
  it.each([
    [".", []],
    [".a", [{ kind: "key", key: "a" }]],
    [
      ".a.b[0]",
      [
        { kind: "key", key: "a" },
        { kind: "key", key: "b" },
        { kind: "index", index: 0 },
      ],
    ],
    ['.["key with space"]', [{ kind: "key", key: "key with space" }]],
    ['.["quote\\"d"]', [{ kind: "key", key: 'quote"d' }]],
    [".[1]", [{ kind: "index", index: 1 }]],
    [
      '.a["b"][1].c',
      [
        { kind: "key", key: "a" },
        { kind: "key", key: "b" },
        { kind: "index", index: 1 },
        { kind: "key", key: "c" },
      ],
    ],
    ['.["\\u00e9"]', [{ kind: "key", key: "é" }]],
  ])("parses %j", (query, steps) => {
    expect(parseJsonQuery(query)).toEqual(steps);
  });

  it.each([
    "",
    "a",
    "..",
    ".a.",
    ".a..b",
    ".[-1]",
    ".[01]",
    ".[1.5]",
    ".[]",
    '.["unterminated]',
    '.["a"',
    ".['single']",
    ".a b",
    ".a[0",
    ".a|.b",
    ".[99999999999999999999]",
    `.${"a".repeat(MAX_QUERY_LENGTH)}`,
    ".a".repeat(MAX_JSON_PATH_STEPS + 1),
  ])("rejects %j", async (query) => {
    await expectStowageError(() => parseJsonQuery(query), "INVALID_INPUT", "INVALID_QUERY");
  });
});

describe("extractJson", () => {
  it("walks keys and indexes", () => {
    expect(extractJson(doc, parseJsonQuery(".a.b[1].c"))).toEqual({ found: true, value: "deep" });
    expect(extractJson(doc, pathSteps(["a", "b", "1", "c"]))).toEqual({ found: true, value: "deep" });
    expect(extractJson(doc, pathSteps(["0"]))).toEqual({ found: true, value: "zero key" });
    expect(extractJson(doc, parseJsonQuery('.["key with space"]'))).toEqual({ found: true, value: 1 });
    expect(extractJson(doc, parseJsonQuery("."))).toEqual({ found: true, value: doc });
  });

  it("tells a JSON null from a missing path", () => {
    expect(extractJson(doc, parseJsonQuery(".nothing"))).toEqual({ found: true, value: null });
    expect(extractJson(doc, parseJsonQuery(".a.b[2]"))).toEqual({ found: true, value: null });
    const missing = extractJson(doc, parseJsonQuery(".absent"));
    expect(missing).toMatchObject({ found: false, stoppedAt: "." });
    expect(extractJson(doc, parseJsonQuery(".nothing.x"))).toMatchObject({
      found: false,
      why: ".nothing is null, not an object or array",
    });
  });

  it.each([
    [".a.b[3]", ".a.b has 3 items, no index 3"],
    [".list[0]", ".list has 0 items, no index 0"],
    [".a.b.x", '.a.b is an array, which has no key "x"'],
    [".a[0]", ".a is an object, which has no index 0"],
    [".a.b[0].x", ".a.b[0] is a number, not an object or array"],
  ])("reports %s as missing: %s", (query, why) => {
    expect(extractJson(doc, parseJsonQuery(query))).toMatchObject({ found: false, why });
  });

  it("treats path segments as indexes only in arrays", () => {
    expect(extractJson(doc, pathSteps(["a", "b", "x"]))).toMatchObject({ found: false });
    expect(extractJson(doc, pathSteps(["a", "b", "01"]))).toMatchObject({ found: false });
  });

  it("sees own properties only", () => {
    const parsed = JSON.parse('{"own": 1, "__proto__": {"polluted": true}}');
    expect(extractJson({}, parseJsonQuery(".constructor"))).toMatchObject({ found: false });
    expect(extractJson({}, pathSteps(["__proto__"]))).toMatchObject({ found: false });
    expect(extractJson({}, pathSteps(["toString"]))).toMatchObject({ found: false });
    expect(extractJson(parsed, pathSteps(["__proto__", "polluted"]))).toEqual({ found: true, value: true });
    expect(extractJson([1], pathSteps(["length"]))).toMatchObject({ found: false });
  });

  it("formats steps for messages", () => {
    expect(formatSteps(parseJsonQuery('.a["b c"][0]'))).toBe('.a["b c"][0]');
    expect(formatSteps(pathSteps(["a", "0"]))).toBe("/a/0");
  });
});
