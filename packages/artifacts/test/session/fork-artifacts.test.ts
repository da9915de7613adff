import { execFileSync } from "node:child_process";
import { mkdir, readdir, readFile, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expectStowageError, type RecordedWarning, recordingLogger } from "@stowage/core/testing";
import { filesUnder, tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { CLAIMS_DIR_NAME } from "../../src/ids/claims.js";
import { artifactsDirFor } from "../../src/layout/session-dir.js";
import { forkArtifacts } from "../../src/session/fork-artifacts.js";
import { createArtifactStore } from "../../src/store/artifact-store.js";
import { sessionFileIn } from "../helpers.js";

const base = await tempDirectory("stowage-artifacts-fork-");
const quiet = { warn: () => {} };

async function sourceSession() {
  const store = createArtifactStore({ sessionFile: sessionFileIn(base) });
  await store.saveArtifact("bash", "zero");
  await store.saveArtifact("python", "one");
  const { outputId } = await store.allocateAgentOutput("Explore");
  await store.writeAgentOutput(outputId, "# explored");
  return store;
}

describe("forkArtifacts", () => {
  it("hard-links the artifacts into the new session, and ids continue after them", async () => {
    const source = await sourceSession();
    const toDir = artifactsDirFor(sessionFileIn(base));
    const result = await forkArtifacts(source.dir, toDir, { logger: quiet });
    expect(result).toMatchObject({ forked: true, copiedFiles: 0, warnings: [] });
    expect(result.linkedFiles).toBeGreaterThanOrEqual(3);
    expect(await filesUnder(toDir, { includeSpecial: true })).toEqual(
      await filesUnder(source.dir, { includeSpecial: true }),
    );
    expect((await stat(join(toDir, "0.bash.log"))).ino).toBe(
      (await stat(join(source.dir, "0.bash.log"))).ino,
    );

    const fork = createArtifactStore({ dir: toDir });
    expect(await fork.saveArtifact("bash", "fork two")).toBe("2");
    expect((await fork.allocateAgentOutput("Next")).outputId).toBe("1-Next");
    expect((await fork.readArtifact("1")).text).toBe("one");
    // Writing in the fork never changes the original.
    await fork.writeAgentOutput("0-Explore", "# rewritten in the fork");
    expect((await source.readAgentOutput("0-Explore")).text).toBe("# explored");
    expect(await source.saveArtifact("bash", "source two")).toBe("2");
  });

  it("is fine without a source directory", async () => {
    const toDir = join(base, "never-created");
    expect(await forkArtifacts(join(base, "missing"), toDir)).toEqual({
      forked: false,
      linkedFiles: 0,
      copiedFiles: 0,
      warnings: [],
    });
    await expect(stat(toDir)).rejects.toThrow();
  });

  it("reports what it cannot copy as warnings and completes", async () => {
    const source = await sourceSession();
    execFileSync("mkfifo", [join(source.dir, "fifo")]);
    const writer = await source.openArtifactWriter("bash");
    await writer.write(new TextEncoder().encode("still running"));
    await symlink("/etc/passwd", join(source.dir, "link-outside"));
    const warned: RecordedWarning[] = [];
    const toDir = artifactsDirFor(sessionFileIn(base));
    const result = await forkArtifacts(source.dir, toDir, {
      logger: recordingLogger(warned).logger,
    });
    expect(result.forked).toBe(true);
    expect(result.warnings).toHaveLength(2);
    expect(result.warnings.join("\n")).toMatch(/fifo: it is not a regular file/);
    expect(result.warnings.join("\n")).toMatch(
      /2\.bash\.log\.partial was not copied: it is still being written/,
    );
    expect(warned).toHaveLength(2);
    // The link is copied as a link (readers never follow it), the rest as files.
    expect((await readdir(toDir)).sort()).toEqual([
      CLAIMS_DIR_NAME,
      "0-Explore.md",
      "0.bash.log",
      "1.python.log",
      "link-outside",
    ]);
    // The id of the unfinished artifact stays taken in the fork.
    expect(await createArtifactStore({ dir: toDir }).saveArtifact("bash", "x")).toBe("3");
    await writer.abandon();
  });

  it("warns and copies nothing when the destination is taken", async () => {
    const source = await sourceSession();
    const toDir = join(base, "taken");
    await mkdir(toDir);
    await writeFile(join(toDir, "existing"), "keep me");
    const result = await forkArtifacts(source.dir, toDir, { logger: quiet });
    expect(result.forked).toBe(false);
    expect(result.warnings[0]).toMatch(/already exists/);
    expect(await readdir(toDir)).toEqual(["existing"]);
    expect(await readFile(join(toDir, "existing"), "utf8")).toBe("keep me");
    expect((await readdir(base)).filter((name) => name.startsWith(".stowage-tmp-"))).toEqual([]);
  });

  it("rejects hostile or overlapping paths", async () => {
    const source = await sourceSession();
    for (const [from, to] of [
      [source.dir, source.dir],
      [source.dir, join(source.dir, "inside")],
      [join(source.dir, "inside"), source.dir],
      [source.dir, "a\u0000b"],
      ["", source.dir],
      [42, source.dir],
    ]) {
      await expectStowageError(forkArtifacts(from as string, to as string), "INVALID_INPUT");
    }
    await expectStowageError(() => artifactsDirFor("x.jsonl"), "INVALID_INPUT", "INVALID_SESSION_FILE");
  });
});
