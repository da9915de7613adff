import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { assertUploadFilename, filenameExtension, uploadFilenameProblem } from "../src/upload-filename.js";
import { HOSTILE_FILENAMES, SAFE_FILENAMES } from "./support/filenames.js";

describe("upload filenames", () => {
  for (const { value, why } of HOSTILE_FILENAMES) {
    it(`rejects ${why}`, async () => {
      expect(uploadFilenameProblem(value)).toEqual(expect.any(String));
      await expectStowageError(() => assertUploadFilename(value), "INVALID_INPUT", "INVALID_FILENAME");
    });
  }

  it.each(SAFE_FILENAMES)("accepts %j", (name) => {
    expect(uploadFilenameProblem(name)).toBeUndefined();
  });

  it("quotes the bad name escaped, never raw", async () => {
    // The message reaches terminals and logs: a control character in it would be live there.
    const err = await expectStowageError(() => assertUploadFilename("a\u001b[31m.png"), "INVALID_INPUT");
    expect(err.message).not.toContain("\u001b");
  });

  it("honours a smaller length cap", () => {
    expect(uploadFilenameProblem("abcdefgh.png", 8)).toBe("must be at most 8 UTF-8 bytes");
    expect(uploadFilenameProblem("abcd.png", 8)).toBeUndefined();
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
