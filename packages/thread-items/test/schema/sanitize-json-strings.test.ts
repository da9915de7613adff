import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { sanitizeJsonStrings } from "../../src/schema/sanitize-json-strings.js";

describe("sanitizeJsonStrings", () => {
  it("returns the value itself when no string in it changes", () => {
    const value = { a: ["x", 1, null, true, { b: "naïve 😀\t\n" }] };
    expect(sanitizeJsonStrings(value)).toBe(value);
  });

  it("copies only what changed, never touching the input", () => {
    const untouched = { keep: "plain" };
    const value = { untouched, list: ["ok", "a\u0007b"], "k\u001b[0m": 1 };
    const clean = sanitizeJsonStrings(value);
    expect(clean).toEqual({ untouched: { keep: "plain" }, list: ["ok", "ab"], k: 1 });
    expect(clean.untouched).toBe(untouched);
    expect(value.list[1]).toBe("a\u0007b");
  });

  it("sanitizes what JSON.stringify would write: a toJSON result in place of its object", () => {
    const value = { when: { toJSON: () => "to\u0000day" } };
    expect(sanitizeJsonStrings(value)).toEqual({ when: "today" });
  });

  it('a key that sanitizes to "__proto__" stays a plain own property', () => {
    const clean = sanitizeJsonStrings({ "__pro\u0007to__": { polluted: true } }) as Record<string, unknown>;
    expect(Object.getPrototypeOf(clean)).toBe(Object.prototype);
    expect(Object.hasOwn(clean, "__proto__")).toBe(true);
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
  });

  it("refuses a cycle and nesting too deep for JSON with INVALID_INPUT", async () => {
    const cyclic: Record<string, unknown> = { name: "x" };
    cyclic.self = [cyclic];
    await expectStowageError(() => sanitizeJsonStrings(cyclic), "INVALID_INPUT");
    const deep: unknown[] = [];
    let at = deep;
    for (let depth = 0; depth < 100_000; depth++) {
      const inner: unknown[] = [];
      at.push(inner);
      at = inner;
    }
    await expectStowageError(() => sanitizeJsonStrings(deep), "INVALID_INPUT");
  });
});
