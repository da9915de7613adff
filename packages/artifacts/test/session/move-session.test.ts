import { mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expectStowageError } from "@stowage/core/testing";
import { filesUnder, tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { artifactsDirFor } from "../../src/layout/session-dir.js";
import { moveSession } from "../../src/session/move-session.js";
import { createArtifactStore } from "../../src/store/artifact-store.js";
import { sessionFileIn } from "../helpers.js";

const base = await tempDirectory("stowage-artifacts-move-");
let count = 0;

async function session(withArtifacts = true) {
  const dir = join(base, `from-${count++}`);
  await mkdir(dir);
  const sessionFile = sessionFileIn(dir);
  await writeFile(sessionFile, '{"type":"user"}\n');
  const store = createArtifactStore({ sessionFile });
  if (withArtifacts) {
    await store.saveArtifact("bash", "zero");
    await store.writeAgentOutput("0-Explore", "# explored");
  }
  return {
    sessionFile,
    dir: store.dir,
    files: withArtifacts ? await filesUnder(store.dir, { includeSpecial: true }) : [],
  };
}

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

describe("moveSession on one file system", () => {
  it("moves the session file and its artifacts directory together", async () => {
    const source = await session();
    const newDir = join(base, `to-${count++}`);
    const moved = await moveSession(source.sessionFile, newDir);
    expect(moved.sessionFile).toBe(join(newDir, source.sessionFile.split("/").pop()!));
    expect(moved.artifactsDir).toBe(artifactsDirFor(moved.sessionFile));
    expect(moved.warnings).toEqual([]);
    expect(await readFile(moved.sessionFile, "utf8")).toBe('{"type":"user"}\n');
    expect(await filesUnder(moved.artifactsDir, { includeSpecial: true })).toEqual(source.files);
    expect(await exists(source.sessionFile)).toBe(false);
    expect(await exists(source.dir)).toBe(false);
    // Ids continue in the new place.
    expect(await createArtifactStore({ sessionFile: moved.sessionFile }).saveArtifact("bash", "x")).toBe("1");
  });

  it("moves a session without artifacts", async () => {
    const source = await session(false);
    const moved = await moveSession(source.sessionFile, join(base, `to-${count++}`));
    expect(await exists(moved.sessionFile)).toBe(true);
    expect(await exists(moved.artifactsDir)).toBe(false);
  });

  it("never replaces a session file at the destination", async () => {
    const source = await session();
    const newDir = join(base, `to-${count++}`);
    await mkdir(newDir);
    const occupant = join(newDir, source.sessionFile.split("/").pop()!);
    await writeFile(occupant, "another session");
    await expectStowageError(moveSession(source.sessionFile, newDir), "ALREADY_EXISTS", "DESTINATION_EXISTS");
    expect(await readFile(occupant, "utf8")).toBe("another session");
    expect(await filesUnder(source.dir, { includeSpecial: true })).toEqual(source.files);
    expect(await exists(source.sessionFile)).toBe(true);
  });

  it("rolls the session file back when the artifacts directory cannot be moved", async () => {
    const source = await session();
    const newDir = join(base, `to-${count++}`);
    await mkdir(newDir);
    // The destination artifacts path is occupied by a file: the second move fails.
    const blocker = artifactsDirFor(join(newDir, source.sessionFile.split("/").pop()!));
    await writeFile(blocker, "in the way");
    const err = await expectStowageError(
      moveSession(source.sessionFile, newDir),
      "ALREADY_EXISTS",
      "DESTINATION_EXISTS",
    );
    expect(err.details).toEqual({ rolledBack: true, sessionFile: source.sessionFile });
    expect(await readFile(source.sessionFile, "utf8")).toBe('{"type":"user"}\n');
    expect(await filesUnder(source.dir, { includeSpecial: true })).toEqual(source.files);
    expect((await readdir(newDir)).sort()).toEqual([blocker.split("/").pop()]);
    expect(await readFile(blocker, "utf8")).toBe("in the way");
  });

  it("rolls back when the destination artifacts directory is a non-empty directory", async () => {
    const source = await session();
    const newDir = join(base, `to-${count++}`);
    const taken = artifactsDirFor(join(newDir, source.sessionFile.split("/").pop()!));
    await mkdir(taken, { recursive: true });
    await writeFile(join(taken, "0.bash.log"), "someone else's artifact");
    await expectStowageError(moveSession(source.sessionFile, newDir), "ALREADY_EXISTS");
    expect(await exists(source.sessionFile)).toBe(true);
    expect(await readFile(join(taken, "0.bash.log"), "utf8")).toBe("someone else's artifact");
  });

  it("rolls back when the destination artifacts directory exists, even empty", async () => {
    const source = await session();
    const newDir = join(base, `to-${count++}`);
    const taken = artifactsDirFor(join(newDir, source.sessionFile.split("/").pop()!));
    await mkdir(taken, { recursive: true });
    const err = await expectStowageError(
      moveSession(source.sessionFile, newDir),
      "ALREADY_EXISTS",
      "DESTINATION_EXISTS",
    );
    expect(err.details).toEqual({ rolledBack: true, sessionFile: source.sessionFile });
    expect(await filesUnder(source.dir, { includeSpecial: true })).toEqual(source.files);
    expect(await readdir(taken)).toEqual([]);
    expect(await readdir(newDir)).toEqual([taken.split("/").pop()]);
  });

  it("is a no-op into the same directory, and rejects bad input", async () => {
    const source = await session();
    const same = await moveSession(source.sessionFile, join(source.sessionFile, ".."));
    expect(same.sessionFile).toBe(source.sessionFile);
    expect(await exists(source.sessionFile)).toBe(true);
    await expectStowageError(moveSession(join(base, "1_missing.jsonl"), join(base, "x")), "NOT_FOUND");
    await expectStowageError(
      moveSession(join(base, "bad-name.jsonl"), join(base, "x")),
      "INVALID_INPUT",
      "INVALID_SESSION_FILE",
    );
    await expectStowageError(moveSession(source.sessionFile, "a\u0000b"), "INVALID_INPUT");
    await expectStowageError(moveSession(source.sessionFile, join(source.dir, "sub")), "INVALID_INPUT");
    const aborted = new AbortController();
    aborted.abort();
    await expectStowageError(
      moveSession(source.sessionFile, join(base, "y"), { signal: aborted.signal }),
      "ABORTED",
    );
    expect(await exists(source.sessionFile)).toBe(true);
  });
});
