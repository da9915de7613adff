import { execFileSync } from "node:child_process";
import { mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { createArtifactStore, forkArtifacts, moveSession } from "@stowage/artifacts";
import { expectStowageError } from "@stowage/core/testing";
import { filesUnder, isRoot, tempDirectory } from "@stowage/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { artifactsDirFor } from "../src/layout/session-dir.js";
import { mountTmpfs, sessionFileIn, unmount } from "./helpers.js";

// Another file system for EXDEV: a tmpfs mounted for this file (needs root; skipped with a
// printed reason outside CI when mounting is impossible).
const base = await tempDirectory("stowage-artifacts-cross-fs-");
const mountPoint = join(base, "tmpfs");
const mounted = isRoot && (await mountTmpfs(mountPoint, "4m", "cross-file-system move and fork tests"));
if (!isRoot)
  console.warn("[stowage] cross-file-system move and fork tests skipped: mounting a tmpfs needs root");
afterAll(() => {
  if (mounted) unmount(mountPoint);
});

let count = 0;
const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

async function session(artifactBytes = 1000) {
  const dir = join(base, `disk-${count++}`);
  await mkdir(dir);
  const sessionFile = sessionFileIn(dir);
  await writeFile(sessionFile, '{"type":"user"}\n');
  const store = createArtifactStore({ sessionFile });
  await store.saveArtifact("bash", new Uint8Array(artifactBytes).fill(0x61));
  await store.writeAgentOutput("0-Explore", "# explored");
  return { sessionFile, dir: store.dir, files: await filesUnder(store.dir, { includeSpecial: true }) };
}

describe.skipIf(!mounted)("across file systems (EXDEV)", () => {
  beforeAll(async () => {
    // Sanity: the tmpfs really is another device, so rename fails with EXDEV.
    expect((await stat(mountPoint)).dev).not.toBe((await stat(base)).dev);
  });

  it("moveSession copies, then removes the sources", async () => {
    const source = await session();
    const newDir = join(mountPoint, `moved-${count++}`);
    const moved = await moveSession(source.sessionFile, newDir);
    expect(moved.warnings).toEqual([]);
    expect(await readFile(moved.sessionFile, "utf8")).toBe('{"type":"user"}\n');
    expect(await filesUnder(moved.artifactsDir, { includeSpecial: true })).toEqual(source.files);
    expect((await readFile(join(moved.artifactsDir, "0.bash.log"))).byteLength).toBe(1000);
    expect(await exists(source.sessionFile)).toBe(false);
    expect(await exists(source.dir)).toBe(false);
    expect((await readdir(newDir)).sort()).toEqual(
      [basename(moved.artifactsDir), basename(moved.sessionFile)].sort(),
    );
    expect(await createArtifactStore({ sessionFile: moved.sessionFile }).saveArtifact("bash", "x")).toBe("1");
  });

  it("moveSession rolls the session file back when the artifacts do not fit (ENOSPC)", async () => {
    const source = await session(6 * 1024 * 1024); // larger than the 4 MiB tmpfs
    const newDir = join(mountPoint, `full-${count++}`);
    const err = await expectStowageError(moveSession(source.sessionFile, newDir), "STORAGE_FULL");
    expect(err.details).toEqual({ rolledBack: true, sessionFile: source.sessionFile });
    expect(await readFile(source.sessionFile, "utf8")).toBe('{"type":"user"}\n');
    expect(await filesUnder(source.dir, { includeSpecial: true })).toEqual(source.files);
    expect(await readdir(newDir)).toEqual([]);
  });

  it("moveSession rolls back when an entry cannot be copied across (a FIFO)", async () => {
    const source = await session();
    execFileSync("mkfifo", [join(source.dir, "pipe")]);
    const newDir = join(mountPoint, `fifo-${count++}`);
    const err = await expectStowageError(moveSession(source.sessionFile, newDir), "CONFLICT", "NOT_COPYABLE");
    expect(err.details?.rolledBack).toBe(true);
    expect(await exists(source.sessionFile)).toBe(true);
    expect(await readdir(newDir)).toEqual([]);
  });

  it("forkArtifacts copies where it cannot hard-link", async () => {
    const source = await session();
    const toDir = artifactsDirFor(sessionFileIn(mountPoint));
    const result = await forkArtifacts(source.dir, toDir);
    expect(result).toMatchObject({ forked: true, linkedFiles: 0, warnings: [] });
    expect(result.copiedFiles).toBe(source.files.length);
    expect(await filesUnder(toDir, { includeSpecial: true })).toEqual(source.files);
    expect(await createArtifactStore({ dir: toDir }).saveArtifact("bash", "x")).toBe("1");
  });
});
