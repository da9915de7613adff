import { describe, expect, it } from "vitest";
import { jsonBytes } from "../../src/feed/json-bytes.js";

const MIB = 1024 * 1024;
const expected = (value: unknown) => Buffer.from(JSON.stringify(value));

describe("jsonBytes: JSON.stringify's bytes, long strings escaped a slice at a time", () => {
  // A slice is 1 MiB of UTF-16 units: a surrogate pair placed across every nearby slice end.
  const emoji = "\u{1F600}";
  const acrossSliceEnds = Array.from(
    { length: 5 },
    (_, shift) => `${"a".repeat(MIB - 2 + shift)}${emoji}tail`,
  );
  it.each([
    ["short strings only", { a: "x", b: [1, "y\n", null], c: { d: true } }],
    ["a long string of every escape", { output: '"\\\n\t\u0001\u001f</script>\u2028é'.repeat(MIB / 8) }],
    ...acrossSliceEnds.map((text, shift): [string, unknown] => [
      `a surrogate pair at shift ${shift}`,
      { text },
    ]),
    [
      "long strings in arrays and nested objects",
      { a: ["z".repeat(3 * MIB), { b: "q".repeat(MIB + 1) }], c: "end" },
    ],
    ["a long string that looks like a token", { t: `"0123:0"${"x".repeat(2 * MIB)}` }],
    ["a long lone surrogate", { s: `${"\ud800".repeat(MIB + 3)}` }],
  ])("%s", async (_, value) => {
    expect(Buffer.from(await jsonBytes(value)).equals(expected(value))).toBe(true);
  });

  it("a value JSON cannot hold is INVALID_INPUT", async () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    await expect(jsonBytes(cyclic)).rejects.toMatchObject({ code: "INVALID_INPUT" });
  });
});
