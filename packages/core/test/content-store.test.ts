import { describe, expect, it } from "vitest";
import { formatBlobRef, parseBlobRef } from "../src/content-store.js";
import { StowageError } from "../src/errors.js";
import { HOSTILE_REFS } from "../src/testing/hostile-keys.js";

const hash = "0123456789abcdef".repeat(4);

describe("blob refs", () => {
  it("formats and parses the strict form", () => {
    const ref = formatBlobRef(hash);
    expect(ref).toBe(`blob:sha256:${hash}`);
    expect(parseBlobRef(ref)).toBe(hash);
  });

  describe("anything else is not a ref", () => {
    for (const [why, value] of HOSTILE_REFS) {
      it(why, () => {
        expect(parseBlobRef(value)).toBeNull();
      });
    }
  });

  it("refuses to format a ref from a bad hash", () => {
    for (const bad of ["", "../x", hash.toUpperCase(), `${hash}0`]) {
      try {
        formatBlobRef(bad);
        throw new Error("accepted");
      } catch (err) {
        expect(StowageError.is(err, "INVALID_INPUT")).toBe(true);
      }
    }
  });
});
