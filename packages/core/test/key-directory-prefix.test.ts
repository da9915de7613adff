import { describe, expect, it } from "vitest";
import { assertKeyDirectoryPrefix } from "../src/keys.js";
import { expectStowageError } from "../src/testing/expect-stowage-error.js";
import { HOSTILE_PREFIXES } from "../src/testing/hostile-keys.js";

describe("assertKeyDirectoryPrefix", () => {
  it.each(["", "blobs/", "a/b/", "hot-state/"])("accepts %j", (prefix) => {
    expect(() => assertKeyDirectoryPrefix(prefix)).not.toThrow();
  });

  it.each<[string, unknown]>([
    ["a prefix not ending in /", "blobs"],
    ["a number", 7],
    ["undefined", undefined],
    ...HOSTILE_PREFIXES.map(({ value, why }): [string, unknown] => [why, value]),
  ])("refuses %s", async (_why, prefix) => {
    await expectStowageError(() => assertKeyDirectoryPrefix(prefix), "INVALID_INPUT");
  });
});
