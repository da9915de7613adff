import { expectStowageError, HOSTILE_REFS } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { toBlobHash } from "../src/blob-hash.js";

const hash = "0123456789abcdef".repeat(4);

describe("toBlobHash", () => {
  it("takes a bare hash or its ref", () => {
    expect(toBlobHash(`blob:sha256:${hash}`)).toBe(hash);
    expect(toBlobHash(hash)).toBe(hash);
  });

  describe("anything else is INVALID_INPUT", () => {
    for (const [why, value] of HOSTILE_REFS) {
      it(why, async () => {
        await expectStowageError(() => toBlobHash(value), "INVALID_INPUT");
      });
    }
  });
});
