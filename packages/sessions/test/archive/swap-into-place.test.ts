import { writeFileSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { openDirectoryBeneath } from "@stowage/core/fs";
import { expectStowageError } from "@stowage/core/testing";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it, onTestFinished } from "vitest";
import { swapIntoPlace } from "../../src/archive/swap-into-place.js";
import { snapshotDirectory } from "../dir-snapshot.js";

const base = await tempDirectory("stowage-swap-");

/** What the staged files hold, by their path below the target. */
const NEW: Record<string, string> = {
  "a.jsonl": "new a",
  "dir/f": "new f",
  "dir/new/g": "new g",
  "link/x": "x",
};

/** Stages the files of `paths` as swapIntoPlace expects them: flat, the i-th named `i`. */
async function stage(stagedDir: string, paths: readonly string[]): Promise<string[]> {
  for (const [index, path] of paths.entries()) {
    if (NEW[path] !== undefined) await writeFile(join(stagedDir, String(index)), NEW[path]);
  }
  return [...paths];
}

/** A target with an old copy (`a.jsonl`, `dir/f`) and a file of its own (`dir/local`); an empty staging directory. */
async function setUp() {
  const root = await mkdtemp(join(base, "case-"));
  const targetDir = join(root, "target");
  const stagedDir = join(root, "staged");
  const asideDir = join(root, "aside");
  await mkdir(join(targetDir, "dir"), { recursive: true });
  await mkdir(stagedDir);
  await mkdir(asideDir);
  await writeFile(join(targetDir, "a.jsonl"), "old a");
  await writeFile(join(targetDir, "dir", "f"), "old f");
  await writeFile(join(targetDir, "dir", "local"), "not in the staged set");
  const target = openDirectoryBeneath(targetDir, [])!;
  onTestFinished(() => target.close());
  return { targetDir, stagedDir, asideDir, target };
}

describe("swapIntoPlace", () => {
  it("installs file by file: replaces the files it holds, creates missing directories, keeps every other file", async () => {
    const { targetDir, stagedDir, asideDir, target } = await setUp();
    const created: string[] = [];
    const replaced = await swapIntoPlace({
      target,
      stagedDir,
      asideDir,
      paths: await stage(stagedDir, ["a.jsonl", "dir/f", "dir/new/g"]),
      overwrite: true,
      onCreate: (path) => created.push(path),
    });
    expect(replaced).toEqual(["a.jsonl", "dir/f"]);
    expect(created).toEqual([join(targetDir, "dir", "new")]);
    expect(await readFile(join(targetDir, "a.jsonl"), "utf8")).toBe("new a");
    expect(await readFile(join(targetDir, "dir", "f"), "utf8")).toBe("new f");
    expect(await readFile(join(targetDir, "dir", "new", "g"), "utf8")).toBe("new g");
    expect(await readFile(join(targetDir, "dir", "local"), "utf8")).toBe("not in the staged set");
    // The replaced files wait aside for the caller to remove.
    expect(Object.keys(await snapshotDirectory(asideDir)).sort()).toEqual(["0", "1"]);
  });

  it("never replaces a file that appeared after the check: CONFLICT, and every move undone", async () => {
    const { targetDir, stagedDir, asideDir, target } = await setUp();
    // Another process (another session's restore) writes dir/new/g once the check found it absent:
    // here, as soon as the swap creates dir/new.
    const theirs = join(targetDir, "dir", "new", "g");
    const err = await swapIntoPlace({
      target,
      stagedDir,
      asideDir,
      paths: await stage(stagedDir, ["a.jsonl", "dir/new/g"]),
      overwrite: true,
      onCreate: () => writeFileSync(theirs, "someone else's"),
    }).catch((e: unknown) => e);
    await expectStowageError(Promise.reject(err), "CONFLICT", "FILE_APPEARED");
    expect(await readFile(theirs, "utf8")).toBe("someone else's");
    expect(await readFile(join(targetDir, "a.jsonl"), "utf8")).toBe("old a");
    // Put back where it was staged.
    expect(await readFile(join(stagedDir, "1"), "utf8")).toBe("new g");
  });

  it("undoes the moves already made when a later one fails", async () => {
    const { targetDir, stagedDir, asideDir, target } = await setUp();
    const before = await snapshotDirectory(targetDir);
    // "missing" has no staged file: its rename fails after the first two have been swapped.
    const err = await swapIntoPlace({
      target,
      stagedDir,
      asideDir,
      paths: await stage(stagedDir, ["a.jsonl", "dir/f", "missing"]),
      overwrite: true,
    }).catch((e: unknown) => e);
    expect((err as NodeJS.ErrnoException).code).toBe("ENOENT");
    expect(await snapshotDirectory(targetDir)).toEqual(before);
    expect(await readdir(stagedDir)).toEqual(expect.arrayContaining(["0", "1"]));
    expect(await readFile(join(stagedDir, "0"), "utf8")).toBe("new a");
    expect(await readFile(join(stagedDir, "1"), "utf8")).toBe("new f");
  });

  it("without overwrite, an existing file is CONFLICT before anything moves", async () => {
    const { targetDir, stagedDir, asideDir, target } = await setUp();
    const before = await snapshotDirectory(targetDir);
    const error = await expectStowageError(
      swapIntoPlace({
        target,
        stagedDir,
        asideDir,
        paths: await stage(stagedDir, ["dir/new/g", "dir/f"]),
        overwrite: false,
      }),
      "CONFLICT",
    );
    expect(error.details).toEqual({ existing: ["dir/f"] });
    expect(await snapshotDirectory(targetDir)).toEqual(before);
  });

  it("never replaces a directory where a file goes (CONFLICT, NOT_A_FILE)", async () => {
    const { targetDir, stagedDir, asideDir, target } = await setUp();
    await mkdir(join(targetDir, "dir", "new", "g"), { recursive: true });
    await writeFile(join(targetDir, "dir", "new", "g", "inside"), "kept");
    const before = await snapshotDirectory(targetDir);
    const error = await expectStowageError(
      swapIntoPlace({
        target,
        stagedDir,
        asideDir,
        paths: await stage(stagedDir, ["a.jsonl", "dir/new/g"]),
        overwrite: true,
      }),
      "CONFLICT",
    );
    expect(error.reason).toBe("NOT_A_FILE");
    expect(await snapshotDirectory(targetDir)).toEqual(before);
  });

  it("refuses a link where a directory goes, and asks whether each existing file may be replaced", async () => {
    const { targetDir, stagedDir, asideDir, target } = await setUp();
    const outside = await mkdtemp(join(base, "outside-"));
    await symlink(outside, join(targetDir, "link"));
    const linked = await expectStowageError(
      swapIntoPlace({
        target,
        stagedDir,
        asideDir,
        paths: await stage(stagedDir, ["link/x"]),
        overwrite: true,
      }),
      "FORBIDDEN",
    );
    expect(linked.reason).toBe("SYMLINK_REFUSED");
    expect(await snapshotDirectory(outside)).toEqual({});

    const asked: string[] = [];
    const before = await snapshotDirectory(targetDir);
    await expect(
      swapIntoPlace({
        target,
        stagedDir,
        asideDir,
        paths: await stage(stagedDir, ["a.jsonl", "dir/f"]),
        overwrite: true,
        checkReplaceable: async (path, existing) => {
          asked.push(`${path}: ${await readFile(existing, "utf8")}`);
          if (path === "dir/f") throw new Error("not yours");
        },
      }),
    ).rejects.toThrow("not yours");
    expect(asked).toEqual(["a.jsonl: old a", "dir/f: old f"]);
    expect(await snapshotDirectory(targetDir)).toEqual(before);
  });
});
