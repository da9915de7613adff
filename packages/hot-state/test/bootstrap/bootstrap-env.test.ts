import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { bootstrapOptionsFromEnv } from "../../src/env.js";

describe("bootstrapOptionsFromEnv", () => {
  it("is off with the default threshold when nothing is set", () => {
    // One more than the default budget's maxInlineArtifactChars (2,000): the two agree.
    expect(bootstrapOptionsFromEnv({})).toEqual({ enabled: false, thresholdChars: 2001 });
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

  it("reads the design document's names (001: OPENCLAW_ARTIFACT_REFS, _THRESHOLD_CHARS=8000)", () => {
    expect(
      bootstrapOptionsFromEnv({
        OPENCLAW_ARTIFACT_REFS: "true",
        OPENCLAW_ARTIFACT_REFS_THRESHOLD_CHARS: "8000",
      }),
    ).toEqual({ enabled: true, thresholdChars: 8000 });
  });

  it("takes the STOWAGE_ name when both are set, for each setting on its own", () => {
    expect(
      bootstrapOptionsFromEnv({
        STOWAGE_ARTIFACT_REFS: "off",
        OPENCLAW_ARTIFACT_REFS: "true",
        OPENCLAW_ARTIFACT_REFS_THRESHOLD_CHARS: "8000",
      }),
    ).toEqual({ enabled: false, thresholdChars: 8000 });
    expect(
      bootstrapOptionsFromEnv({
        OPENCLAW_ARTIFACT_REFS: "yes",
        STOWAGE_ARTIFACT_REFS_THRESHOLD_CHARS: "3000",
        OPENCLAW_ARTIFACT_REFS_THRESHOLD_CHARS: "8000",
      }),
    ).toEqual({ enabled: true, thresholdChars: 3000 });
  });

  it("refuses a bad value under the document's name, naming that variable", async () => {
    const err = await expectStowageError(
      () => bootstrapOptionsFromEnv({ OPENCLAW_ARTIFACT_REFS_THRESHOLD_CHARS: "8k" }),
      "INVALID_INPUT",
      "INVALID_SETTING",
    );
    expect(err.details).toEqual({ setting: "OPENCLAW_ARTIFACT_REFS_THRESHOLD_CHARS" });
  });

  it.each(["ture", "enabled", "2"])("refuses STOWAGE_ARTIFACT_REFS=%j", async (value) => {
    const err = await expectStowageError(
      () => bootstrapOptionsFromEnv({ STOWAGE_ARTIFACT_REFS: value }),
      "INVALID_INPUT",
      "INVALID_SETTING",
    );
    expect(err.details).toEqual({ setting: "STOWAGE_ARTIFACT_REFS" });
  });

  it.each(["0", "-5", "1.5", "8k", "1e4", "99999999999999999999", " 12 34"])(
    "refuses threshold %j",
    async (value) => {
      const err = await expectStowageError(
        () => bootstrapOptionsFromEnv({ STOWAGE_ARTIFACT_REFS_THRESHOLD_CHARS: value }),
        "INVALID_INPUT",
        "INVALID_SETTING",
      );
      expect(err.details).toEqual({ setting: "STOWAGE_ARTIFACT_REFS_THRESHOLD_CHARS" });
    },
  );
});
