import { spawnSync } from "node:child_process";
import { chown, mkdir, readdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { removeAbandoned } from "../../test-setup/temp-in-memory.ts";
import { isRoot, tempDirectory } from "../src/index.js";

/** The pid of a process that has exited (reaped): nothing answers to it now. */
function goneProcessId(): number {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], {
    encoding: "utf8",
  });
  return Number(child.stdout);
}

// The run's temporary directories live in memory, so a killed run's are removed by the next run;
// what else sits in /dev/shm (another run's, another program's, a planted link) must stay.
describe("removeAbandoned: a killed run's directories, and nothing else", () => {
  it("removes only directories named after a process that is gone", async () => {
    const base = await tempDirectory("stowage-abandoned-");
    const outside = await tempDirectory("stowage-abandoned-outside-");
    await writeFile(join(outside, "keep.txt"), "kept");
    const gone = goneProcessId();
    const abandoned = `stowage-test-${gone}-Ab12Cd`;
    await mkdir(join(base, abandoned, "data"), { recursive: true });
    await writeFile(join(base, abandoned, "data", "file"), "x");

    const kept = [
      `stowage-test-${process.pid}-Ef34Gh`, // a live run's (this process)
      "stowage-test-notapid-Ij56Kl", // not a pid
      "stowage-test--1-Mn78Op", // a negative one
      "stowage-test-0-Qr90St", // pid 0: the process group, never a run
      "stowage-test-", // nothing after the prefix
      "PostgreSQL.1889052014", // another program's
    ];
    for (const name of kept) await mkdir(join(base, name));
    // A file and a link under a gone run's name: not directories of ours, never followed.
    await writeFile(join(base, `stowage-test-${gone}-file`), "not a directory");
    await symlink(outside, join(base, `stowage-test-${gone}-link`));

    await removeAbandoned(base);

    expect((await readdir(base)).sort()).toEqual(
      [...kept, `stowage-test-${gone}-file`, `stowage-test-${gone}-link`].sort(),
    );
    expect(await readdir(outside)).toEqual(["keep.txt"]);
  });

  it.skipIf(!isRoot)(
    "leaves another user's directory of a gone run (only root can make one here)",
    async () => {
      const base = await tempDirectory("stowage-abandoned-other-");
      const theirs = `stowage-test-${goneProcessId()}-Uv12Wx`;
      await mkdir(join(base, theirs));
      await chown(join(base, theirs), 65534, 65534);
      await removeAbandoned(base);
      expect(await readdir(base)).toEqual([theirs]);
    },
  );

  it("a base that does not exist is nothing to do", async () => {
    const base = await tempDirectory("stowage-abandoned-none-");
    await expect(removeAbandoned(join(base, "missing"))).resolves.toBeUndefined();
  });
});
