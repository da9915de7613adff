import { mkdir, readFile, realpath, rm, symlink, utimes, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { expectStowageError } from "@stowage/core/testing";
import { tempDirectory } from "@stowage/test-support";
import { beforeAll, describe, expect, it } from "vitest";
import { captureSession } from "../../src/archive/capture-session.js";
import { restoreSession } from "../../src/archive/restore-session.js";
import { claudeSessionLocation } from "../../src/claude/session-location.js";
import { availableCodecs } from "../../src/codec/codecs.js";
import { HOSTILE_IDS } from "../../src/testing/hostile-ids.js";
import { realisticSessionTree } from "../../src/testing/realistic-session.js";
import { writeSessionTree } from "../../src/testing/write-session-tree.js";
import { snapshotDirectory } from "../dir-snapshot.js";

const base = await tempDirectory("stowage-capture-");

const sessionId = "3b1f6a2e-8c4d-4e5f-9a0b-1c2d3e4f5a6b";
const otherSessionId = "9e8d7c6b-5a49-4382-9170-6f5e4d3c2b1a";

let cwd: string;
let sourceConfig: string;
let projectDir: string;

beforeAll(async () => {
  await mkdir(join(base, "work", "my_app.v2"), { recursive: true });
  cwd = await realpath(join(base, "work", "my_app.v2"));
  sourceConfig = join(base, "source-config");
  const files = realisticSessionTree({ sessionId, cwd, mainBytes: 400_000, screenshotEvery: 10 });
  const location = await writeSessionTree({ configDir: sourceConfig, cwd, sessionId, files });
  projectDir = location.projectDir;
  // Another session of the same project, with its own legacy subagent transcript: never captured.
  const other = realisticSessionTree({
    sessionId: otherSessionId,
    cwd,
    mainBytes: 20_000,
    subagents: 0,
    seed: 9,
  });
  await writeSessionTree({ configDir: sourceConfig, cwd, sessionId: otherSessionId, files: other });
  // A symlink and an unsafe name inside the companion directory: reported, never followed.
  await symlink("/etc/hostname", join(projectDir, sessionId, "tool-results", "leak.txt"));
  await writeFile(join(projectDir, sessionId, "tool-results", "bad\nname.txt"), "x");
  await utimes(
    join(projectDir, `${sessionId}.jsonl`),
    new Date(1_750_000_000_000),
    new Date(1_750_000_000_000),
  );
});

describe("captureSession and restoreSession", () => {
  it("captures the transcript, the companion directory and this session's legacy agent files", async () => {
    const captured = await captureSession({ configDir: sourceConfig, cwd, sessionId });
    const paths = captured.manifest.files.map((file) => file.path);
    expect(paths[0]).toBe(`${sessionId}.jsonl`);
    expect(paths.filter((path) => path.startsWith(`${sessionId}/subagents/`))).toHaveLength(4);
    expect(paths.filter((path) => path.startsWith(`${sessionId}/tool-results/`))).toHaveLength(2);
    expect(paths.filter((path) => /^agent-[^/]+\.jsonl$/.test(path))).toHaveLength(1);
    expect(paths.some((path) => path.includes(otherSessionId))).toBe(false);
    expect(captured.skipped.map((file) => file.path).sort()).toEqual([
      `${sessionId}/tool-results/bad\nname.txt`,
      `${sessionId}/tool-results/leak.txt`,
    ]);
    for (const file of captured.manifest.files) {
      expect(file.size).toBe((await readFile(join(projectDir, ...file.path.split("/")))).byteLength);
      expect(file.sha256).toMatch(/^[0-9a-f]{64}$/);
    }
    expect(captured.manifest.files[0]!.mtimeMs).toBe(1_750_000_000_000);
    expect(captured.codec).toBe("brotli");
    expect(captured.blobSizeBytes).toBe(captured.blob.byteLength);
    expect(captured.blobSizeBytes).toBeLessThan(captured.rawSizeBytes / 2);
    expect(captured.projectKey).toBe((await claudeSessionLocation({ cwd, sessionId })).projectKey);
  });

  for (const codec of availableCodecs()) {
    it(`${codec}: restores into a fresh config dir, every file byte for byte with its mtime`, async () => {
      const captured = await captureSession({ configDir: sourceConfig, cwd, sessionId, codec });
      const target = join(base, `restore-${codec}`);
      const restored = await restoreSession(captured, { configDir: target, cwd });
      expect(restored.projectDir).toBe(join(target, "projects", captured.projectKey!));
      expect(restored.replaced).toEqual([]);
      const source = await snapshotDirectory(projectDir);
      const restoredTree = await snapshotDirectory(restored.projectDir!);
      for (const { path } of captured.manifest.files) expect(restoredTree[path]).toBe(source[path]);
      // Only this session's files arrived (with their directories); no temp directory is left.
      const expected = new Set(captured.manifest.files.map((file) => file.path));
      for (const path of Object.keys(restoredTree)) {
        if (restoredTree[path] === "dir")
          expect([...expected].some((file) => file.startsWith(`${path}/`))).toBe(true);
        else expect(expected.has(path)).toBe(true);
      }
    });
  }

  it("replaces the files of a stale copy that the archive holds, keeps the others, and reports what it replaced", async () => {
    const captured = await captureSession({ configDir: sourceConfig, cwd, sessionId });
    const target = join(base, "restore-stale");
    const stale = await claudeSessionLocation({ configDir: target, cwd, sessionId });
    const companionFile = captured.manifest.files.find((file) => file.path.startsWith(`${sessionId}/`))!.path;
    const legacyFile = captured.manifest.files.find((file) => file.path.startsWith("agent-"))!.path;
    await mkdir(join(stale.companionDir, "subagents"), { recursive: true });
    await mkdir(dirname(join(stale.projectDir, companionFile)), { recursive: true });
    await writeFile(stale.transcriptPath, "stale\n");
    await writeFile(join(stale.projectDir, companionFile), "stale\n");
    // A legacy file of this very session (its lines name it): the archive's copy replaces it.
    await writeFile(join(stale.projectDir, legacyFile), `${JSON.stringify({ sessionId, stale: true })}\n`);
    // Not in the archive: a restore deletes nothing it did not write.
    await writeFile(join(stale.companionDir, "subagents", "agent-stale.jsonl"), "local only\n");
    await writeFile(join(stale.projectDir, `${otherSessionId}.jsonl`), "another session\n");
    const restored = await restoreSession(captured, { configDir: target, cwd });
    expect(restored.replaced.sort()).toEqual([`${sessionId}.jsonl`, companionFile, legacyFile].sort());
    const source = await snapshotDirectory(projectDir);
    const after = await snapshotDirectory(stale.projectDir);
    for (const { path } of captured.manifest.files) expect(after[path]).toBe(source[path]);
    expect(await readFile(join(stale.companionDir, "subagents", "agent-stale.jsonl"), "utf8")).toBe(
      "local only\n",
    );
    expect(await readFile(join(stale.projectDir, `${otherSessionId}.jsonl`), "utf8")).toBe(
      "another session\n",
    );
  });

  it("with overwrite: false, refuses with CONFLICT and changes nothing", async () => {
    const captured = await captureSession({ configDir: sourceConfig, cwd, sessionId });
    const target = join(base, "restore-no-overwrite");
    const stale = await claudeSessionLocation({ configDir: target, cwd, sessionId });
    await mkdir(stale.projectDir, { recursive: true });
    await writeFile(stale.transcriptPath, "keep me\n");
    const before = await snapshotDirectory(target);
    await expectStowageError(
      restoreSession(captured, { configDir: target, cwd, overwrite: false }),
      "CONFLICT",
    );
    expect(await snapshotDirectory(target)).toEqual(before);
  });

  it("restores under another working directory's project key, or the captured one by default", async () => {
    const captured = await captureSession({ configDir: sourceConfig, cwd, sessionId });
    const elsewhere = await restoreSession(captured, {
      configDir: join(base, "restore-moved"),
      cwd: "/srv/other repo",
    });
    expect(elsewhere.projectKey).toBe("-srv-other-repo");
    const byDefault = await restoreSession(captured, { configDir: join(base, "restore-default") });
    expect(byDefault.projectKey).toBe(captured.projectKey);
    await expectStowageError(
      restoreSession(captured, { configDir: base, cwd, projectKey: "-x" }),
      "INVALID_INPUT",
    );
  });

  it("rejects a hostile session id before touching the file system", async () => {
    for (const { value } of HOSTILE_IDS) {
      await expectStowageError(
        captureSession({ configDir: sourceConfig, cwd, sessionId: value as string }),
        "INVALID_INPUT",
      );
    }
  });

  it("leaves out legacy agent files when asked", async () => {
    const captured = await captureSession({
      configDir: sourceConfig,
      cwd,
      sessionId,
      includeLegacyAgents: false,
    });
    expect(captured.manifest.files.some((file) => file.path.startsWith("agent-"))).toBe(false);
  });

  it("fails with NOT_FOUND when the session has no transcript, INVALID_INPUT when it is a symlink", async () => {
    const missing = "00000000-0000-4000-8000-000000000000";
    await expectStowageError(
      captureSession({ configDir: sourceConfig, cwd, sessionId: missing }),
      "NOT_FOUND",
    );
    const linked = "11111111-1111-4111-8111-111111111111";
    await symlink(join(projectDir, `${sessionId}.jsonl`), join(projectDir, `${linked}.jsonl`));
    await expectStowageError(
      captureSession({ configDir: sourceConfig, cwd, sessionId: linked }),
      "INVALID_INPUT",
    );
    await rm(join(projectDir, `${linked}.jsonl`));
  });

  it("fails with TOO_LARGE past maxBytes, before reading the files", async () => {
    await expectStowageError(
      captureSession({ configDir: sourceConfig, cwd, sessionId, maxBytes: 100_000 }),
      "TOO_LARGE",
    );
    for (const maxBytes of [0, -1, 1.5, Number.NaN]) {
      await expectStowageError(
        captureSession({ configDir: sourceConfig, cwd, sessionId, maxBytes }),
        "INVALID_INPUT",
      );
    }
    await expectStowageError(
      captureSession({ configDir: sourceConfig, cwd, sessionId, codec: "lz4" as "gzip" }),
      "INVALID_INPUT",
    );
  });

  it("an aborted capture or restore fails with ABORTED and writes nothing", async () => {
    const controller = new AbortController();
    controller.abort();
    const { signal } = controller;
    await expectStowageError(captureSession({ configDir: sourceConfig, cwd, sessionId, signal }), "ABORTED");
    const captured = await captureSession({ configDir: sourceConfig, cwd, sessionId });
    const target = join(base, "restore-aborted");
    await expectStowageError(restoreSession(captured, { configDir: target, cwd, signal }), "ABORTED");
    expect(await snapshotDirectory(target)).toEqual({});
  });

  it("a session id that is not a UUID (an Agent SDK store's, a host's) is captured and restored the same way", async () => {
    const opaque = "sess-2026_11.v2";
    const files = realisticSessionTree({
      sessionId: opaque,
      cwd,
      mainBytes: 10_000,
      legacyAgents: 1,
      seed: 4,
    });
    await writeSessionTree({ configDir: sourceConfig, cwd, sessionId: opaque, files });
    const captured = await captureSession({ configDir: sourceConfig, cwd, sessionId: opaque });
    // The legacy agent file names the session in its lines, so it belongs to it and comes along.
    expect(captured.manifest.files.map((file) => file.path).sort()).toEqual([...files.keys()].sort());
    const target = join(base, "restore-opaque");
    const restored = await restoreSession(captured, { configDir: target, cwd });
    expect(restored.transcriptPath).toBe(join(restored.projectDir!, `${opaque}.jsonl`));
    const tree = await snapshotDirectory(restored.projectDir!);
    for (const path of files.keys()) expect(tree[path]).toMatch(/^file /);
  });
});
