// The swap an agent's workspace allows: a directory of the path replaced by a link out of the root.
// Here it is made before the call, deterministically; upload-root-race.test.ts races it.
import { mkdir, mkdtemp, readFile, rename, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expectStowageError } from "@stowage/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openInsideRoot } from "../src/agent/open-inside-root.js";

let base: string;
beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), "stowage-open-inside-root-"));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

describe("openInsideRoot", () => {
  it("refuses a directory swapped for a link, and opens the workspace's file once it is back", async () => {
    const root = join(base, "workspace");
    const outside = join(base, "outside");
    await mkdir(join(root, "sub"), { recursive: true });
    await mkdir(outside);
    await writeFile(join(root, "sub", "notes.txt"), "workspace notes\n");
    await writeFile(join(outside, "notes.txt"), "HOST FILE\n");
    await rename(join(root, "sub"), join(root, "sub-moved"));
    await symlink(outside, join(root, "sub"));
    const error = await expectStowageError(
      openInsideRoot(root, "sub/notes.txt"),
      "FORBIDDEN",
      "SYMLINK_REFUSED",
    );
    // Said about the path the caller gave; the host's file is never named or read.
    expect(error.message).not.toContain(outside);
    await rm(join(root, "sub"));
    await rename(join(root, "sub-moved"), join(root, "sub"));
    const opened = await openInsideRoot(root, "sub/notes.txt");
    try {
      expect(opened.size).toBe("workspace notes\n".length);
      expect(opened.realPath).toBe(join(root, "sub", "notes.txt"));
      expect(await readFile(opened.handle, "utf8")).toBe("workspace notes\n");
    } finally {
      await opened.handle.close();
    }
  });

  it("refuses a path with NUL and a root that is a file", async () => {
    await writeFile(join(base, "plain"), "x");
    await expectStowageError(openInsideRoot(base, "a\u0000b"), "INVALID_INPUT", "INVALID_PATH");
    await expectStowageError(
      openInsideRoot(join(base, "plain"), "x"),
      "INVALID_INPUT",
      "INVALID_UPLOAD_ROOT",
    );
  });
});
