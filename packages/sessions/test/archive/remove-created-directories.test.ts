import { mkdir, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { removeCreatedDirectories } from "../../src/archive/remove-created-directories.js";

describe("removeCreatedDirectories (a failed restore's cleanup)", () => {
  it("removes the empty directories it created, root chain included, deepest first", async () => {
    const base = await tempDirectory("stowage-cleanup-");
    const root = join(base, "a", "b", "config");
    await mkdir(join(root, "projects", "-w"), { recursive: true });
    // As openDirectoryBeneath reports them: the topmost new ancestor of the root, then each segment.
    await removeCreatedDirectories(
      [join(base, "a"), join(root, "projects"), join(root, "projects", "-w")],
      root,
    );
    expect(await readdir(base)).toEqual([]);
  });

  it("keeps a directory another restore has installed a session into meanwhile, and what it holds", async () => {
    const base = await tempDirectory("stowage-cleanup-");
    const root = join(base, "config");
    const project = join(root, "projects", "-w");
    await mkdir(project, { recursive: true });
    // Another restore, into the directories this one created, finished first.
    await writeFile(join(project, "0f6c3a52-1b7e-4c1a-9d55-3c2b8f7e9a10.jsonl"), "{}\n");
    await removeCreatedDirectories([root, join(root, "projects"), project], root);
    expect(await readdir(project)).toEqual(["0f6c3a52-1b7e-4c1a-9d55-3c2b8f7e9a10.jsonl"]);
  });

  it("never touches a directory it did not create", async () => {
    const base = await tempDirectory("stowage-cleanup-");
    const root = join(base, "config");
    await mkdir(join(root, "projects", "-w"), { recursive: true });
    await removeCreatedDirectories([join(root, "projects", "-w")], root);
    expect(await readdir(join(root, "projects"))).toEqual([]);
    expect(await readdir(base)).toEqual(["config"]);
  });
});
