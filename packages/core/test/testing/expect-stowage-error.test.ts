import { describe, expect, it } from "vitest";
import { StowageError } from "../../src/errors.js";
import { expectStowageError } from "../../src/testing/expect-stowage-error.js";

describe("expectStowageError", () => {
  it("returns the error of a rejected promise, a throwing function or an async function", async () => {
    const err = new StowageError("NOT_FOUND", "gone", { reason: "NO_SUCH_THING" });
    expect(await expectStowageError(Promise.reject(err), "NOT_FOUND")).toBe(err);
    expect(
      await expectStowageError(
        () => {
          throw err;
        },
        "NOT_FOUND",
        "NO_SUCH_THING",
      ),
    ).toBe(err);
    expect(await expectStowageError(async () => Promise.reject(err), "NOT_FOUND")).toBe(err);
  });

  it.each([
    ["success", () => 42, /succeeded with 42/],
    ["another code", () => Promise.reject(new StowageError("CONFLICT", "x")), /got CONFLICT/],
    [
      "another reason",
      () => Promise.reject(new StowageError("NOT_FOUND", "x", { reason: "B" })),
      /got NOT_FOUND \(B\)/,
    ],
    ["a plain Error", () => Promise.reject(new Error("boom")), /got Error: boom/],
  ])("fails on %s", async (_why, action, message) => {
    await expect(
      expectStowageError(action, "NOT_FOUND", _why === "another reason" ? "A" : undefined),
    ).rejects.toThrow(message);
  });
});
