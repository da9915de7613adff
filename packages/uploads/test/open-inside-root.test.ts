// The race an agent's workspace allows: a directory of the path swapped for a link out of the root
// between the checks of the path and the open. The test seam runs the swap exactly there.
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
  it("refuses a directory swapped for a link between the check and the open", async () => {
    const root = join(base, "workspace");
    const outside = join(base, "outside");
    await mkdir(join(root, "sub"), { recursive: true });
    await mkdir(outside);
    await writeFile(join(root, "sub", "notes.txt"), "workspace notes\n");
    await writeFile(join(outside, "notes.txt"), "HOST FILE\n");
    await expectStowageError(
      openInsideRoot(root, "sub/notes.txt", {
        beforeOpen: async () => {
          await rename(join(root, "sub"), join(root, "sub-moved"));
          await symlink(outside, join(root, "sub"));
        },
      }),
      "FORBIDDEN",
      "CHANGED_WHILE_OPENED",
    );
    // Without the swap the same path opens the workspace's file.
    await rm(join(root, "sub"));
    await rename(join(root, "sub-moved"), join(root, "sub"));
    const opened = await openInsideRoot(root, "sub/notes.txt");
    try {
      expect(opened.size).toBe("workspace notes\n".length);
      expect(await readFile(opened.handle, "utf8")).toBe("workspace notes\n");
    } finally {
      await opened.handle.close();
    }
  });
});
