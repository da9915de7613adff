import { describe, expect, it } from "vitest";
import { HTTP_STATUS_BY_CODE, STOWAGE_ERROR_CODES, StowageError } from "../src/errors.js";

describe("StowageError", () => {
  it("carries code, message, cause, reason and details", () => {
    const cause = new Error("disk on fire");
    const err = new StowageError("TOO_LARGE", "item too large", {
      cause,
      reason: "THREAD_ITEM_TOO_LARGE",
      details: { limit: 10 },
    });
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe("StowageError");
    expect(err.code).toBe("TOO_LARGE");
    expect(err.cause).toBe(cause);
    expect(err.reason).toBe("THREAD_ITEM_TOO_LARGE");
    expect(err.toJSON()).toEqual({
      error: "item too large",
      code: "TOO_LARGE",
      reason: "THREAD_ITEM_TOO_LARGE",
      details: { limit: 10 },
    });
    expect(JSON.parse(JSON.stringify(err))).toEqual(err.toJSON());
  });

  it("is() checks the code when one is given", () => {
    const err = new StowageError("NOT_FOUND", "x");
    expect(StowageError.is(err)).toBe(true);
    expect(StowageError.is(err, "NOT_FOUND")).toBe(true);
    expect(StowageError.is(err, "CONFLICT")).toBe(false);
  });

  it("is() rejects look-alikes that are not StowageErrors", () => {
    for (const value of [
      new Error("x"),
      { code: "NOT_FOUND", message: "x" },
      Object.assign(new Error("x"), { code: "NOT_FOUND", name: "StowageError" }),
      null,
      undefined,
      "NOT_FOUND",
    ]) {
      expect(StowageError.is(value)).toBe(false);
    }
  });

  it("is() recognizes errors from another copy of the package", async () => {
    // A query string makes Vite load a second, independent instance of the module.
    const secondCopy = "../src/errors.ts?second-copy";
    const copy = (await import(/* @vite-ignore */ secondCopy)) as typeof import("../src/errors.js");
    expect(copy.StowageError).not.toBe(StowageError);
    const foreign = new copy.StowageError("FORBIDDEN", "from the other copy");
    expect(foreign instanceof StowageError).toBe(false);
    expect(StowageError.is(foreign, "FORBIDDEN")).toBe(true);
    expect(copy.StowageError.is(new StowageError("EXPIRED", "x"), "EXPIRED")).toBe(true);
  });

  it("maps every code to an HTTP status", () => {
    for (const code of STOWAGE_ERROR_CODES) expect(HTTP_STATUS_BY_CODE[code]).toBeGreaterThanOrEqual(400);
    expect(HTTP_STATUS_BY_CODE.UNAUTHORIZED).toBe(401);
    expect(HTTP_STATUS_BY_CODE.FORBIDDEN).toBe(403);
    expect(HTTP_STATUS_BY_CODE.QUOTA_EXCEEDED).toBe(400);
    expect(HTTP_STATUS_BY_CODE.TOO_LARGE).toBe(413);
    expect(HTTP_STATUS_BY_CODE.RATE_LIMITED).toBe(429);
  });
});
