import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readdir, readFile, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { expectStowageError } from "@stowage/core/testing";
import { spawnChild, tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { restoreSession } from "../../src/archive/restore-session.js";
import { STAGING_PREFIX } from "../../src/archive/stale-staging.js";
import { buildArchive, type RawFile } from "../build-archive.js";
import { snapshotDirectory } from "../dir-snapshot.js";

const base = await tempDirectory("stowage-restore-concurrency-");

const sessionId = "1b2c3d4e-5f60-4718-8293-a4b5c6d7e8f9";
const projectKey = "-workspace-app";
const text = (value: string) => new TextEncoder().encode(value);
const file = (path: string, content: string): RawFile => ({ path, content: text(content) });

async function withOldCopy(): Promise<{ configDir: string; projectDir: string }> {
  const configDir = await mkdtemp(join(base, "config-"));
  const projectDir = join(configDir, "projects", projectKey);
  await mkdir(join(projectDir, sessionId, "subagents"), { recursive: true });
  await writeFile(join(projectDir, `${sessionId}.jsonl`), "old transcript\n");
  await writeFile(join(projectDir, sessionId, "subagents", "agent-old.jsonl"), "old\n");
  return { configDir, projectDir };
}

describe("restoreSession under concurrency and crashes", () => {
  it("two restores of one session at once: never interleaved, the transcript wholly one archive's, no file lost", async () => {
    const a = await buildArchive({
      sessionId,
      projectKey,
      files: [file(`${sessionId}.jsonl`, "A\n"), file(`${sessionId}/a.txt`, "A")],
    });
    const b = await buildArchive({
      sessionId,
      projectKey,
      files: [file(`${sessionId}.jsonl`, "B\n"), file(`${sessionId}/b.txt`, "B")],
    });
    for (let round = 0; round < 10; round++) {
      const { configDir, projectDir } = await withOldCopy();
      await Promise.all([
        restoreSession(a, { configDir, projectKey }),
        restoreSession(b, { configDir, projectKey }),
      ]);
      // Each restore replaces the files it holds and keeps the rest: the old copy's subagent
      // stays, and both archives' companion files are there, whichever swapped last.
      const tree = await snapshotDirectory(projectDir);
      expect(Object.keys(tree).sort()).toEqual([
        sessionId,
        `${sessionId}.jsonl`,
        `${sessionId}/a.txt`,
        `${sessionId}/b.txt`,
        `${sessionId}/subagents`,
        `${sessionId}/subagents/agent-old.jsonl`,
      ]);
      expect(["A\n", "B\n"]).toContain(await readFile(join(projectDir, `${sessionId}.jsonl`), "utf8"));
    }
  });

  it("a signal that fires mid-way fails with ABORTED and leaves the old copy untouched", async () => {
    const archive = await buildArchive({
      sessionId,
      projectKey,
      files: [
        file(`${sessionId}.jsonl`, "new\n"),
        ...Array.from({ length: 20 }, (_, i) => file(`${sessionId}/f${i}`, "x".repeat(100_000))),
      ],
    });
    const { configDir, projectDir } = await withOldCopy();
    const before = await snapshotDirectory(projectDir);
    // Reads as not aborted for the first checks, then as aborted: a cancel in the middle.
    let checks = 0;
    const signal = {
      get aborted() {
        return ++checks > 8;
      },
      reason: new Error("user cancelled"),
      addEventListener() {},
      removeEventListener() {},
    } as unknown as AbortSignal;
    await expectStowageError(restoreSession(archive, { configDir, projectKey, signal }), "ABORTED");
    expect(checks).toBeGreaterThan(8);
    expect(await snapshotDirectory(projectDir)).toEqual(before);
  });

  it("a process killed mid-restore leaves the old copy intact; its staging directory is swept once stale", async () => {
    const files = [
      file(`${sessionId}.jsonl`, "new transcript\n"),
      ...Array.from({ length: 120 }, (_, i) => ({
        path: `${sessionId}/tool-results/r${i}.txt`,
        content: new Uint8Array(randomBytes(512 * 1024)),
      })),
    ];
    const archive = await buildArchive({ sessionId, projectKey, codec: "gzip", files });
    const blobPath = join(base, "killed.blob");
    await writeFile(blobPath, archive.blob);
    const { configDir, projectDir } = await withOldCopy();
    const before = await snapshotDirectory(projectDir);

    const child = spawnChild(
      new URL("../children/restore-archive.ts", import.meta.url),
      [blobPath, sessionId, "gzip", String(archive.rawSizeBytes), configDir, projectKey],
      { stdout: "ignore", stderr: "ignore" },
    );
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    // Kill it once it is writing files into its staging directory (flat: the i-th file is `new/<i>`).
    let staged = 0;
    for (let i = 0; i < 600 && staged < 5; i++) {
      await sleep(25);
      const staging = (await readdir(projectDir)).find((name) => name.startsWith(STAGING_PREFIX));
      if (staging) staged = (await readdir(join(projectDir, staging, "new")).catch(() => [])).length;
    }
    child.kill("SIGKILL");
    await exited;
    expect(staged).toBeGreaterThanOrEqual(5);

    const after = await snapshotDirectory(projectDir);
    const leftovers = Object.keys(after).filter(
      (path) => path.startsWith(STAGING_PREFIX) && !path.includes("/"),
    );
    expect(leftovers).toHaveLength(1);
    const withoutStaging = Object.fromEntries(
      Object.entries(after).filter(([path]) => !path.startsWith(STAGING_PREFIX)),
    );
    expect(withoutStaging).toEqual(before);

    // A later restore keeps a young staging directory (it may be another live restore) and
    // removes it once it is older than an hour.
    const small = await buildArchive({
      sessionId,
      projectKey,
      files: [file(`${sessionId}.jsonl`, "later\n")],
    });
    await restoreSession(small, { configDir, projectKey });
    expect((await readdir(projectDir)).filter((name) => name.startsWith(STAGING_PREFIX))).toHaveLength(1);
    const twoHoursAgo = new Date(Date.now() - 2 * 3600 * 1000);
    await utimes(join(projectDir, leftovers[0]!), twoHoursAgo, twoHoursAgo);
    await restoreSession(small, { configDir, projectKey });
    expect((await readdir(projectDir)).filter((name) => name.startsWith(STAGING_PREFIX))).toEqual([]);
  });
});
