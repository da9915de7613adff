import { StowageError } from "@stowage/core";
import { describe, expect, it } from "vitest";
import { HOSTILE_FILENAMES, SAFE_FILENAMES } from "../test/support/filenames.js";
import { artifactFilenameProblem, assertArtifactFilename, filenameExtension } from "./artifact-filename.js";

describe("artifact filenames", () => {
  for (const { value, why } of HOSTILE_FILENAMES) {
    it(`rejects ${why}`, () => {
      expect(artifactFilenameProblem(value)).toEqual(expect.any(String));
      let thrown: unknown;
      try {
        assertArtifactFilename(value);
      } catch (err) {
        thrown = err;
      }
      expect(StowageError.is(thrown, "INVALID_INPUT")).toBe(true);
      expect((thrown as StowageError).reason).toBe("INVALID_FILENAME");
      expect((thrown as StowageError).message).toMatch(/^filename /);
    });
  }

  it.each(SAFE_FILENAMES)("accepts %j", (name) => {
    expect(artifactFilenameProblem(name)).toBeUndefined();
  });

  it("quotes the bad name escaped, never raw", () => {
    expect(() => assertArtifactFilename("a\u001b[31m.png")).toThrow(/\\u001b/);
  });

  it("honours a smaller length cap", () => {
    expect(artifactFilenameProblem("abcdefgh.png", 8)).toBe("must be at most 8 UTF-8 bytes");
    expect(artifactFilenameProblem("abcd.png", 8)).toBeUndefined();
  });

  it.each([
    ["shot.png", "png"],
    ["SHOT.PNG", "png"],
    ["a.tar.gz", "gz"],
    ["noext", ""],
    [".hidden", ""],
  ])("the extension of %j is %j", (name, extension) => {
    expect(filenameExtension(name)).toBe(extension);
  });
});
