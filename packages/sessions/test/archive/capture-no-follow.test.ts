import { execFileSync } from "node:child_process";
import { mkdir, realpath, rename, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expectStowageError } from "@stowage/core/testing";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { archiveSession } from "../../src/archive/capture-session.js";
import { collectSessionFiles, readSessionFile } from "../../src/archive/collect-files.js";
import { claudeSessionLocation } from "../../src/claude/session-location.js";

const base = await tempDirectory("stowage-no-follow-");
const sessionId = "0f6c3a52-1b7e-4c1a-9d55-3c2b8f7e9a10";
const SECRET = "TOP-SECRET-CONTENT";

let counter = 0;
/** A fresh session with `<sid>/tool-results/x.txt`, and a private file outside it. */
async function session() {
  const root = join(base, String(counter++));
  const cwd = join(root, "cwd");
  await mkdir(cwd, { recursive: true });
  const location = await claudeSessionLocation({
    configDir: join(root, "cfg"),
    cwd: await realpath(cwd),
    sessionId,
  });
  await mkdir(join(location.companionDir, "tool-results"), { recursive: true });
  await writeFile(location.transcriptPath, `${JSON.stringify({ type: "user", sessionId })}\n`);
  await writeFile(join(location.companionDir, "tool-results", "x.txt"), "harmless\n");
  const secret = join(root, "secret");
  await writeFile(secret, SECRET, { mode: 0o600 });
  const secretDir = join(root, "secret-dir");
  await mkdir(secretDir);
  await writeFile(join(secretDir, "x.txt"), SECRET);
  return { location, secret, secretDir, target: join(location.companionDir, "tool-results", "x.txt") };
}

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

describe("readSessionFile", () => {
  it("refuses a symlink, a FIFO and a file below a directory swapped for a link", async () => {
    const { location, secret, secretDir, target } = await session();
    const file = { root: location.projectDir, segments: [sessionId, "tool-results", "x.txt"] };
    expect(text(((await readSessionFile(file, 100)) as { bytes: Uint8Array }).bytes)).toBe("harmless\n");

    await rm(target);
    await symlink(secret, target);
    expect(await readSessionFile(file, 100)).toEqual({ refused: "symlink" });

    await rm(target);
    execFileSync("mkfifo", [target]);
    // Opened without blocking, then refused: a FIFO nobody writes to would hang a plain read.
    expect(await readSessionFile(file, 100)).toEqual({ refused: "other" });

    const toolResults = join(location.companionDir, "tool-results");
    await rename(toolResults, `${toolResults}.old`);
    await symlink(secretDir, toolResults);
    expect(await readSessionFile(file, 100)).toEqual({ refused: "symlink" });
  });

  it("does not read a file over the limit, and reads one more byte than the limit at most", async () => {
    const { location } = await session();
    const file = { root: location.projectDir, segments: [sessionId, "tool-results", "x.txt"] };
    expect(await readSessionFile(file, 8)).toEqual({ oversize: 9 });
    expect(await readSessionFile(file, 9)).toMatchObject({ bytes: new TextEncoder().encode("harmless\n") });
  });
});

describe("archiveSession after the files were listed", () => {
  const collect = async (location: Awaited<ReturnType<typeof session>>["location"]) => {
    const { files, skipped } = await collectSessionFiles(location, { includeLegacyAgents: true });
    return { sessionId, sources: files, skipped };
  };
  const archive = (collected: Awaited<ReturnType<typeof collect>>) =>
    archiveSession("claude-code", collected, { codec: "gzip", maxBytes: 1 << 20 });

  it.each([
    ["a symlink to a private file", "symlink (not followed)"],
    ["a FIFO", "not a regular file"],
  ])("skips a companion file swapped for %s, as if it had been listed so", async (what, reason) => {
    const { location, secret, target } = await session();
    const collected = await collect(location);
    expect(collected.sources.map((file) => file.path)).toContain(`${sessionId}/tool-results/x.txt`);
    await rm(target);
    if (what === "a FIFO") execFileSync("mkfifo", [target]);
    else await symlink(secret, target);
    const captured = await archive(collected);
    expect(captured.manifest.files.map((file) => file.path)).toEqual([`${sessionId}.jsonl`]);
    expect(captured.skipped).toEqual([{ path: `${sessionId}/tool-results/x.txt`, reason }]);
    expect(Buffer.from(captured.blob).includes(SECRET)).toBe(false);
  });

  it("skips files below a directory swapped for a link", async () => {
    const { location, secretDir } = await session();
    const collected = await collect(location);
    const toolResults = join(location.companionDir, "tool-results");
    await rename(toolResults, `${toolResults}.old`);
    await symlink(secretDir, toolResults);
    const captured = await archive(collected);
    expect(captured.manifest.files.map((file) => file.path)).toEqual([`${sessionId}.jsonl`]);
    expect(captured.skipped).toEqual([
      { path: `${sessionId}/tool-results/x.txt`, reason: "symlink (not followed)" },
    ]);
  });

  it("refuses a main transcript swapped for a link (INVALID_INPUT)", async () => {
    const { location, secret } = await session();
    const collected = await collect(location);
    await rm(location.transcriptPath);
    await symlink(secret, location.transcriptPath);
    await expectStowageError(archive(collected), "INVALID_INPUT");
  });
});

describe("collectSessionFiles", () => {
  it("lists a companion subdirectory that is a link as skipped, never walking it", async () => {
    const { location, secretDir } = await session();
    await symlink(secretDir, join(location.companionDir, "linked"));
    const { files, skipped } = await collectSessionFiles(location, { includeLegacyAgents: false });
    expect(files.map((file) => file.path)).toEqual([`${sessionId}.jsonl`, `${sessionId}/tool-results/x.txt`]);
    expect(skipped).toEqual([{ path: `${sessionId}/linked`, reason: "symlink (not followed)" }]);
  });
});
