import { describe, expect, it } from "vitest";
import { pushAll } from "../src/large-arrays.js";

// More arguments than a spread call takes (RangeError past about 120,000 on V8's default stack).
const MANY = 200_000;

describe("pushAll", () => {
  it("appends 200,000 items in order", () => {
    const target = ["first"];
    const items = Array.from({ length: MANY }, (_, i) => `item-${i}`);
    pushAll(target, items);
    expect(target).toHaveLength(MANY + 1);
    expect(target[1]).toBe("item-0");
    expect(target.at(-1)).toBe(`item-${MANY - 1}`);
  });
});
