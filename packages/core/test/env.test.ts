import { describe, expect, it } from "vitest";
import { envFlag, envPositiveInteger, envPositiveNumber, envString, envUrl } from "../src/env.js";
import { expectStowageError } from "../src/testing/expect-stowage-error.js";

describe("environment settings", () => {
  it("treats unset, empty and blank values as unset", () => {
    for (const env of [{}, { X: "" }, { X: "   " }]) {
      expect(envString(env, "X")).toBeUndefined();
      expect(envFlag(env, "X")).toBeUndefined();
      expect(envPositiveInteger(env, "X")).toBeUndefined();
      expect(envPositiveNumber(env, "X")).toBeUndefined();
      expect(envUrl(env, "X")).toBeUndefined();
    }
  });

  it.each([
    ["true", true],
    ["1", true],
    ["YES", true],
    [" on ", true],
    ["false", false],
    ["0", false],
    ["No", false],
    ["off", false],
  ])("reads the flag %j as %s", (raw, value) => {
    expect(envFlag({ X: raw }, "X")).toBe(value);
  });

  it.each(["ture", "enabled", "2", "y"])("refuses the flag %j", async (raw) => {
    const err = await expectStowageError(() => envFlag({ X: raw }, "X"), "INVALID_INPUT", "INVALID_SETTING");
    expect(err.details).toEqual({ setting: "X" });
  });

  it("reads whole and decimal numbers written plainly", () => {
    expect(envPositiveInteger({ X: "8000" }, "X")).toBe(8000);
    expect(envPositiveNumber({ X: "0.5" }, "X")).toBe(0.5);
    expect(envPositiveNumber({ X: "50" }, "X")).toBe(50);
  });

  it.each(["0", "-5", "1.5", "8k", "1e4", "0x10", "99999999999999999999", " 12 34", "Infinity", "NaN"])(
    "refuses the whole number %j",
    async (raw) => {
      await expectStowageError(() => envPositiveInteger({ X: raw }, "X"), "INVALID_INPUT");
    },
  );

  it.each(["0", "-1", "1e3", ".5", "5.", "Infinity", "1,5"])("refuses the number %j", async (raw) => {
    await expectStowageError(() => envPositiveNumber({ X: raw }, "X"), "INVALID_INPUT");
  });

  it("reads URLs of the accepted schemes only", async () => {
    expect(envUrl({ X: "http://127.0.0.1:7480" }, "X")).toBe("http://127.0.0.1:7480");
    expect(envUrl({ X: "postgres://u@h/db" }, "X", ["postgres:", "postgresql:"])).toBe("postgres://u@h/db");
    for (const raw of ["127.0.0.1:7480", "ftp://h", "javascript:alert(1)", "http//x"]) {
      await expectStowageError(() => envUrl({ X: raw }, "X"), "INVALID_INPUT");
    }
    const leaky = await expectStowageError(
      () => envUrl({ X: "mysql://app:hunter2@db/x" }, "X"),
      "INVALID_INPUT",
    );
    expect(leaky.message).not.toContain("hunter2");
  });
});
