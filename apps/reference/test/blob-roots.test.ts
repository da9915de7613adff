import { createHash, randomUUID } from "node:crypto";
import { appendFile, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { collectGarbage } from "@stowage/blob-store";
import { expectStowageError } from "@stowage/core/testing";
import { compressChunks } from "@stowage/sessions";
import { createStowage } from "@stowage/tenancy";
import { textItem } from "@stowage/thread-items";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./support/test-app.js";

// The app's roots over every place it writes refs, through the real services: each place holds a
// ref to a blob of its own, and a collection with no grace keeps exactly those.
describe("the app's garbage-collection roots", () => {
  const alice = { kind: "user", id: "alice" } as const;
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  /** A fresh blob named for the place that will reference it; its hash. */
  async function blobFor(place: string): Promise<string> {
    return (await app.server.services.blobs.put(new TextEncoder().encode(`${place} ${randomUUID()}`))).hash;
  }
  const ref = (hash: string) => `blob:sha256:${hash}`;

  const collect = (roots = app.server.services.stowage.blobRoots()) =>
    collectGarbage({ blobs: app.server.services.blobs, roots, graceMs: 0, timestampSlackMs: 0 });

  it("keeps every blob referenced from any place, and deletes the rest", async () => {
    const { services } = app.server;
    const tenant = services.tenant(alice);
    const kept: Record<string, string> = {};

    const sessionId = randomUUID();
    const session = await tenant.agentSessions.create(sessionId);
    kept["session file"] = await blobFor("session file");
    await appendFile(
      session.sessionFile,
      `${JSON.stringify({ type: "user", image: ref(kept["session file"]) })}\n`,
    );
    kept["tool output artifact"] = await blobFor("artifact");
    await session.artifacts.saveArtifact("bash", `screenshot at ${ref(kept["tool output artifact"])}\n`);
    kept["agent output"] = await blobFor("agent output");
    const { outputId } = await session.artifacts.allocateAgentOutput("Explore");
    await session.artifacts.writeAgentOutput(outputId, `# Found\n![shot](${ref(kept["agent output"])})\n`);

    kept["thread item"] = await blobFor("thread item");
    await tenant.threads.post({ jobId: "job-1", alias: "main" }, textItem(`see ${ref(kept["thread item"])}`));

    const registered = randomUUID();
    await tenant.registeredSessions.register(registered);
    const content = await tenant.registry.storeText("# kept by its record\n".repeat(10));
    kept["content ref"] = content.record.artifact_id;
    const indexed = await tenant.registry.storeText("# kept by a hot state's index only\n".repeat(10));
    kept["hot-state index"] = indexed.record.artifact_id;
    await tenant.registry.delete(indexed.record.artifact_id);
    kept["hot-state text"] = await blobFor("hot state");
    await tenant.hotState.dispatcherFor(registered).write(
      {
        session_id: registered,
        objective: `compare with ${ref(kept["hot-state text"])}`,
        artifact_index: [{ artifact_id: indexed.record.artifact_id, type: "doc" }],
      },
      { expectedVersion: 0 },
    );

    kept["stored session blob"] = await blobFor("session blob");
    const raw = new TextEncoder().encode(`${JSON.stringify({ image: ref(kept["stored session blob"]) })}\n`);
    await tenant.sessionBlobs.create({
      requestId: "req-1",
      sessionId: randomUUID(),
      agentType: "claude-code",
      codec: "gzip",
      blob: await compressChunks("gzip", [raw]),
      rawSizeBytes: raw.byteLength,
    });

    kept.upload = await blobFor("upload");
    const upload = new TextEncoder().encode(JSON.stringify({ log: ref(kept.upload) }));
    const grant = await services.uploads.requestUpload({
      principal: alice,
      sessionId: registered,
      filename: "log.json",
      contentType: "application/json",
      fileSize: upload.byteLength,
      sha256: createHash("sha256").update(upload).digest("hex"),
    });
    expect((await fetch(grant.url, { method: "PUT", headers: grant.headers, body: upload })).ok).toBe(true);

    const unreferenced = await blobFor("nothing");
    // A blob stamped in the millisecond the run starts is young (kept), with no grace or slack:
    // let the clock move past its stamp (once, on a busy CI machine, it had not).
    await sleep(5);
    const report = await collect();
    expect(report.deleted).toBeGreaterThanOrEqual(1);
    for (const [place, hash] of Object.entries(kept)) {
      expect(await services.blobs.has(hash), `${place} keeps its blob`).toBe(true);
    }
    expect(await services.blobs.has(unreferenced)).toBe(false);
    expect(Object.keys(report.rootRefsBySource).sort()).toEqual(
      // Every row of the deployment's table that can hold a ref is read (the LangGraph and OpenAI
      // Agents rows' own keep-what-is-referenced tests are tenancy's).
      [
        "agentSdkSessions",
        "agentSessions",
        "registry",
        "hotState",
        "langgraphCheckpoints",
        "openaiAgentsSessions",
        "sessionBlobs",
        "threads",
        "uploads",
      ].sort(),
    );
  });

  it("stops, deleting nothing, when the agent-sessions directory is missing", async () => {
    const dir = join(app.dataDir, "agent-sessions");
    const orphan = await blobFor("orphan");
    await rm(dir, { recursive: true });
    try {
      const err = await expectStowageError(collect(), "UNAVAILABLE", "ROOTS_UNREADABLE");
      expect(err.details).toEqual({ source: "agentSessions" });
      expect(await app.server.services.blobs.has(orphan)).toBe(true);
    } finally {
      await mkdir(dir, { recursive: true });
    }
  });

  it("stops, deleting nothing, when a hot-state version cannot be read", async () => {
    const { shared, blobs } = app.server.services;
    const orphan = await blobFor("orphan");
    const damaged = `hot-state/user/alice/${randomUUID()}/000000000001.json`;
    await shared.put(damaged, new TextEncoder().encode("{ torn"));
    try {
      const err = await expectStowageError(collect(), "UNAVAILABLE", "ROOTS_UNREADABLE");
      expect(err.details).toEqual({ source: "hotState" });
      expect(await blobs.has(orphan)).toBe(true);
    } finally {
      await shared.delete(damaged);
    }
  });

  it("with shared blobs (S3 or PostgreSQL) refuses unless every host's agent sessions are covered", async () => {
    const { services } = app.server;
    // The same deployment as the server's, as PostgreSQL or S3 would make it: shared across hosts.
    const replicated = createStowage({ ...services.stowage.deployment, sharedAcrossHosts: true });
    const err = await expectStowageError(() => replicated.blobRoots(), "UNAVAILABLE", "ROOTS_NOT_SHARED");
    expect(err.message).toContain("--single-host");
    expect(() => replicated.blobRoots({ singleHost: true })).not.toThrow();
    // Another host's sessions, mounted here, are scanned too.
    const otherHost = await mkdtemp(join(tmpdir(), "stowage-other-host-"));
    try {
      const theirs = await blobFor("another host's session");
      await mkdir(join(otherHost, "user", "bob"), { recursive: true });
      await writeFile(join(otherHost, "user", "bob", "2026-01-01T00-00-00-000Z_s.jsonl"), `${ref(theirs)}\n`);
      await collect(replicated.blobRoots({ otherAgentSessionsDirs: [otherHost] }));
      expect(await services.blobs.has(theirs)).toBe(true);
    } finally {
      await rm(otherHost, { recursive: true, force: true });
    }
  });
});
