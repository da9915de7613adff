import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { snapshotDirectory } from "../../test/dir-snapshot.js";
import { swapIntoPlace } from "./swap-into-place.js";

const base = await tempDirectory("stowage-swap-");

describe("swapIntoPlace", () => {
  it("undoes the moves already made when a later one fails", async () => {
    const root = await mkdtemp(join(base, "case-"));
    const targetDir = join(root, "target");
    const stagedDir = join(root, "staged");
    const asideDir = join(root, "aside");
    await mkdir(join(targetDir, "dir"), { recursive: true });
    await mkdir(join(stagedDir, "dir"), { recursive: true });
    await mkdir(asideDir);
    await writeFile(join(targetDir, "a.jsonl"), "old a");
    await writeFile(join(targetDir, "dir", "f"), "old f");
    await writeFile(join(stagedDir, "a.jsonl"), "new a");
    await writeFile(join(stagedDir, "dir", "f"), "new f");
    const before = await snapshotDirectory(targetDir);
    // "missing" has no staged entry: its rename fails after the first two have been swapped.
    const err = await swapIntoPlace({
      targetDir,
      stagedDir,
      asideDir,
      names: ["a.jsonl", "dir", "missing"],
      overwrite: true,
    }).catch((e: unknown) => e);
    expect((err as NodeJS.ErrnoException).code).toBe("ENOENT");
    expect(await snapshotDirectory(targetDir)).toEqual(before);
    expect(Object.keys(await snapshotDirectory(stagedDir)).sort()).toEqual(["a.jsonl", "dir", "dir/f"]);
  });
});
