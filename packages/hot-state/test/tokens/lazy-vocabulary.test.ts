import { runChild } from "@stowage/test-support";
import { describe, expect, it } from "vitest";

describe("the o200k vocabulary", () => {
  it("is loaded on the first exact count, not when hot-state is imported or counts with a counter of its own", async () => {
    const child = await runChild(new URL("../children/count-without-vocabulary.ts", import.meta.url), []);
    expect(child.stderr).toBe("");
    expect(child.code).toBe(0);
    // "hello world" is two o200k tokens ("hello", " world").
    expect(JSON.parse(child.stdout)).toEqual({
      resolvedBefore: false,
      requiredBefore: false,
      requiredAfter: true,
      exact: 2,
    });
  });
});
