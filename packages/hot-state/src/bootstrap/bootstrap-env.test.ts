import { describe, expect, it } from "vitest";
import { errorOf } from "../../test/codes.js";
import { bootstrapOptionsFromEnv } from "./bootstrap-env.js";

describe("bootstrapOptionsFromEnv", () => {
  it("is off with the default threshold when nothing is set", () => {
    expect(bootstrapOptionsFromEnv({})).toEqual({ enabled: false, thresholdChars: 8000 });
  });

  it.each([
    ["true", true],
    ["1", true],
    ["YES", true],
    [" on ", true],
    ["false", false],
    ["0", false],
    ["no", false],
    ["off", false],
    ["", false],
  ])("reads STOWAGE_ARTIFACT_REFS=%j as %s", (value, enabled) => {
    expect(bootstrapOptionsFromEnv({ STOWAGE_ARTIFACT_REFS: value }).enabled).toBe(enabled);
  });

  it("reads the threshold", () => {
    expect(
      bootstrapOptionsFromEnv({
        STOWAGE_ARTIFACT_REFS: "true",
        STOWAGE_ARTIFACT_REFS_THRESHOLD_CHARS: "12000",
      }),
    ).toEqual({ enabled: true, thresholdChars: 12000 });
  });

  it.each(["ture", "enabled", "2"])("refuses STOWAGE_ARTIFACT_REFS=%j", (value) => {
    expect(errorOf(() => bootstrapOptionsFromEnv({ STOWAGE_ARTIFACT_REFS: value })).code).toBe(
      "INVALID_INPUT",
    );
  });

  it.each(["0", "-5", "1.5", "8k", "1e4", "99999999999999999999", " 12 34"])(
    "refuses threshold %j",
    (value) => {
      expect(
        errorOf(() => bootstrapOptionsFromEnv({ STOWAGE_ARTIFACT_REFS_THRESHOLD_CHARS: value })).code,
      ).toBe("INVALID_INPUT");
    },
  );
});
