import { describe, expect, it } from "vitest";
import { largest, pushAll } from "../src/large-arrays.js";

// More arguments than a spread call takes (RangeError past about 120,000 on V8's default stack).
const MANY = 200_000;

describe("largest", () => {
  it("finds the largest of 200,000 numbers, where Math.max(...values) overflows the stack", () => {
    const values = Array.from({ length: MANY }, (_, i) => (i * 7919) % MANY);
    values[123_456] = MANY + 5;
    expect(() => Math.max(...values)).toThrow(RangeError);
    expect(largest(values, 0)).toBe(MANY + 5);
  });

  it("gives the floor when there is nothing larger", () => {
    expect(largest([], 0)).toBe(0);
    expect(largest([-3, -1], 0)).toBe(0);
    expect(largest([2, 9, 4], 0)).toBe(9);
  });
});

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
