import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openDirectoryBeneath } from "../../src/fs/open-beneath.js";
import { removeTreeBeneath } from "../../src/fs/remove-tree-beneath.js";
import { expectStowageError } from "../../src/testing/expect-stowage-error.js";

// Core sits below @stowage/test-support, so it makes its own temp directory.
const base = await mkdtemp(join(tmpdir(), "stowage-remove-tree-"));
afterAll(() => rm(base, { recursive: true, force: true }));
let count = 0;

/** A root holding `tree/` (files, a subdirectory, links out) and `outside/` beside it. */
function setup() {
  const dir = join(base, String(count++));
  const root = join(dir, "root");
  const outside = join(dir, "outside");
  mkdirSync(join(root, "tree", "sub", "deeper"), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(outside, "keep.txt"), "the host's file\n");
  writeFileSync(join(root, "tree", "a.txt"), "a");
  writeFileSync(join(root, "tree", "sub", "deeper", "b.txt"), "b");
  symlinkSync(outside, join(root, "tree", "sub", "to-outside"));
  symlinkSync(join(outside, "keep.txt"), join(root, "tree", "file-link"));
  const parent = openDirectoryBeneath(root, [])!;
  return { root, outside, parent };
}

describe("removeTreeBeneath", () => {
  it("removes a tree, unlinking its links as links: nothing they point at is touched", async () => {
    const { root, outside, parent } = setup();
    try {
      await removeTreeBeneath(parent, "tree");
    } finally {
      parent.close();
    }
    expect(readdirSync(root)).toEqual([]);
    expect(readdirSync(outside)).toEqual(["keep.txt"]);
    expect(readFileSync(join(outside, "keep.txt"), "utf8")).toBe("the host's file\n");
  });

  it("removes a link given as the tree itself, not the directory it points at", async () => {
    const { root, outside, parent } = setup();
    symlinkSync(outside, join(root, "linked"));
    try {
      await removeTreeBeneath(parent, "linked");
      await removeTreeBeneath(parent, "missing");
    } finally {
      parent.close();
    }
    expect(readdirSync(root)).toEqual(["tree"]);
    expect(readdirSync(outside)).toEqual(["keep.txt"]);
  });

  it("takes one name: `..`, `.` and paths are INVALID_INPUT", async () => {
    const { parent } = setup();
    try {
      for (const name of ["..", ".", "tree/sub", ""]) {
        await expectStowageError(removeTreeBeneath(parent, name), "INVALID_INPUT");
      }
    } finally {
      parent.close();
    }
  });
});
