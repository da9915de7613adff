import { describe, expect, it } from "vitest";
import { mapConcurrent } from "../src/concurrency.js";
import { StowageError } from "../src/errors.js";

const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

describe("mapConcurrent", () => {
  it("keeps input order and never exceeds the limit", async () => {
    let running = 0;
    let peak = 0;
    const result = await mapConcurrent([5, 1, 4, 2, 3, 0, 6], 3, async (value) => {
      running++;
      peak = Math.max(peak, running);
      for (let i = 0; i < value; i++) await tick();
      running--;
      return value * 10;
    });
    expect(result).toEqual([50, 10, 40, 20, 30, 0, 60]);
    expect(peak).toBe(3);
  });

  it("stops starting new work after the first failure and rethrows it", async () => {
    const started: number[] = [];
    const err = await mapConcurrent([0, 1, 2, 3, 4, 5], 2, async (value) => {
      started.push(value);
      await tick();
      if (value === 1) throw new Error("boom");
      return value;
    }).catch((e: unknown) => e);
    expect((err as Error).message).toBe("boom");
    expect(started.length).toBeLessThan(6);
  });

  it("rejects a bad limit", async () => {
    const err = await mapConcurrent([1], 0, async (v) => v).catch((e: unknown) => e);
    expect(StowageError.is(err, "INVALID_INPUT")).toBe(true);
  });
});
