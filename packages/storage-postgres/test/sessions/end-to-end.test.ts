import { randomUUID } from "node:crypto";
import { mkdir, mkdtemp, readFile, realpath, rm } from "node:fs/promises";
import { join, relative } from "node:path";
import {
  captureSession,
  claudeSessionLocation,
  fromTransport,
  restoreSession,
  toTransport,
} from "@stowage/sessions";
import { realisticSessionTree, writeSessionTree } from "@stowage/sessions/testing";
import { filesUnder, tempDirectory } from "@stowage/test-support";
import { expect, it } from "vitest";
import { createPostgresSessionBlobs } from "../../src/sessions/session-blobs.js";
import { describeBackends } from "../backends.js";

const base = await tempDirectory("stowage-e2e-");

describeBackends("ephemeral container run, end to end", (backend) => {
  it("capture → container response → PostgreSQL → wipe → follow-up restore: every file byte for byte", async () => {
    const run = await mkdtemp(join(base, `${backend.name}-`));
    // The workspace path is the same in both containers, as it is in a real deployment.
    const workspace = join(run, "workspace", "acme_api.v2");
    await mkdir(workspace, { recursive: true });
    const cwd = await realpath(workspace);
    const sessionId = randomUUID();
    const requestId = `req-${randomUUID()}`;

    // Container 1: the agent ran and left a Claude Code session tree in its CLAUDE_CONFIG_DIR.
    const firstConfig = join(run, "container-1", ".claude");
    const files = realisticSessionTree({
      sessionId,
      cwd,
      mainBytes: 1_500_000,
      screenshotEvery: 20,
      seed: 5,
    });
    const { projectDir } = await writeSessionTree({ configDir: firstConfig, cwd, sessionId, files });
    const captured = await captureSession({ configDir: firstConfig, cwd, sessionId });
    const response = JSON.stringify({ success: true, ...toTransport(captured) });

    // The consumer stores what the container returned.
    const repo = createPostgresSessionBlobs({ db: backend.connection().db });
    await repo.create({
      owner: "user:alice",
      requestId,
      ...fromTransport(JSON.parse(response)), // carries agentType (claude-code)
    });

    // The container dies with everything in it.
    await rm(join(run, "container-1"), { recursive: true, force: true });
    await rm(join(run, "workspace"), { recursive: true, force: true });
    await mkdir(workspace, { recursive: true });

    // Follow-up: the consumer sends the latest session to a fresh container, which restores it.
    const latest = await repo.getLatestForRequest("user:alice", requestId);
    expect(latest?.sessionId).toBe(sessionId);
    const request = JSON.parse(JSON.stringify(toTransport(latest!)));
    const secondConfig = join(run, "container-2", ".claude");
    const restored = await restoreSession(fromTransport(request), { configDir: secondConfig, cwd });
    const projectDirRestored = restored.projectDir!;

    const location = await claudeSessionLocation({ configDir: secondConfig, cwd, sessionId });
    expect(restored.projectDir).toBe(location.projectDir);
    expect(relative(secondConfig, projectDirRestored)).toBe(relative(firstConfig, projectDir));
    expect(await filesUnder(projectDirRestored)).toEqual([...files.keys()].sort());
    for (const [path, content] of files) {
      const bytes = await readFile(join(projectDirRestored, ...path.split("/")));
      expect(bytes.equals(Buffer.from(content)), path).toBe(true);
    }
    await repo.deleteForRequest("user:alice", requestId);
  });
});
