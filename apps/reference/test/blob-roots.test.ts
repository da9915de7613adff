import { createHash, randomUUID } from "node:crypto";
import { appendFile, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { collectGarbage } from "@stowage/blob-store";
import { expectStowageError } from "@stowage/core/testing";
import { compressChunks, createMemorySessionBlobRepository } from "@stowage/sessions";
import { textItem } from "@stowage/thread-items";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { blobRoots, sessionBlobRefs } from "../src/cli/blob-roots.js";
import { startTestApp, type TestApp } from "./support/test-app.js";

const HASH_A = "a".repeat(64);
const HASH_B = "b".repeat(64);

async function collect(refs: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const ref of refs) out.push(ref);
  return out;
}

async function store(
  repository: ReturnType<typeof createMemorySessionBlobRepository>,
  owner: string,
  sessionId: string,
  text: string,
) {
  const raw = new TextEncoder().encode(text);
  await repository.create({
    owner,
    requestId: "req-1",
    agentType: "claude-code",
    sessionId,
    codec: "gzip",
    blob: await compressChunks("gzip", [raw]),
    rawSizeBytes: Buffer.byteLength(text),
  });
}

describe("the session blobs GC root", () => {
  it("reads the refs inside every owner's stored session archive, across pages", async () => {
    const repository = createMemorySessionBlobRepository();
    await store(
      repository,
      "user:alice",
      "11111111-1111-4111-8111-111111111111",
      `{"image":"blob:sha256:${HASH_A}"}\n`,
    );
    await store(
      repository,
      "org:acme",
      "22222222-2222-4222-8222-222222222222",
      `{"x":1}\n{"y":"blob:sha256:${HASH_B}"}\n`,
    );
    expect((await collect(sessionBlobRefs(repository))).sort()).toEqual([HASH_A, HASH_B]);
  });

  it("stops, rather than scanning part of it, at an archive larger than it claims", async () => {
    // Repositories refuse such a blob when it is stored; one stored before that check still may be there.
    const text = `${"x".repeat(4096)}blob:sha256:${HASH_A}`;
    const record = {
      id: 1,
      owner: "user:alice",
      requestId: "req-1",
      agentType: "claude-code",
      sessionId: "33333333-3333-4333-8333-333333333333",
      codec: "gzip" as const,
      blob: await compressChunks("gzip", [new TextEncoder().encode(text)]),
      rawSizeBytes: 100,
      blobSizeBytes: 0,
      createdAt: new Date(),
      expiresAt: null,
    };
    const repository = { ...createMemorySessionBlobRepository(), list: async () => ({ records: [record] }) };
    await expectStowageError(collect(sessionBlobRefs(repository)), "TOO_LARGE");
  });
});

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

  const collect = (roots = blobRoots(app.server.services)) =>
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
    const report = await collect();
    expect(report.deleted).toBeGreaterThanOrEqual(1);
    for (const [place, hash] of Object.entries(kept)) {
      expect(await services.blobs.has(hash), `${place} keeps its blob`).toBe(true);
    }
    expect(await services.blobs.has(unreferenced)).toBe(false);
    expect(Object.keys(report.rootRefsBySource).sort()).toEqual(
      ["agent sessions", "content refs", "hot state", "session blobs", "threads", "uploads"].sort(),
    );
  });

  it("stops, deleting nothing, when the agent-sessions directory is missing", async () => {
    const dir = join(app.dataDir, "agent-sessions");
    const orphan = await blobFor("orphan");
    await rm(dir, { recursive: true });
    try {
      const err = await expectStowageError(collect(), "UNAVAILABLE", "ROOTS_UNREADABLE");
      expect(err.details).toEqual({ source: "agent sessions" });
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
      expect(err.details).toEqual({ source: "hot state" });
      expect(await blobs.has(orphan)).toBe(true);
    } finally {
      await shared.delete(damaged);
    }
  });

  it("with shared blobs (S3 or PostgreSQL) refuses unless every host's agent sessions are covered", async () => {
    const { services } = app.server;
    const replicated = {
      ...services,
      config: { ...services.config, database: { url: "postgres://db.internal/stowage" } },
    };
    const err = await expectStowageError(() => blobRoots(replicated), "UNAVAILABLE", "ROOTS_NOT_SHARED");
    expect(err.message).toContain("--single-host");
    expect(() => blobRoots(replicated, { singleHost: true })).not.toThrow();
    // Another host's sessions, mounted here, are scanned too.
    const otherHost = await mkdtemp(join(tmpdir(), "stowage-other-host-"));
    try {
      const theirs = await blobFor("another host's session");
      await mkdir(join(otherHost, "user", "bob"), { recursive: true });
      await writeFile(join(otherHost, "user", "bob", "2026-01-01T00-00-00-000Z_s.jsonl"), `${ref(theirs)}\n`);
      await collect(blobRoots(replicated, { otherAgentSessionsDirs: [otherHost] }));
      expect(await services.blobs.has(theirs)).toBe(true);
    } finally {
      await rm(otherHost, { recursive: true, force: true });
    }
  });
});
