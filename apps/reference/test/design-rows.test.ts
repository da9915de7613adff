import { randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { toTransport } from "@stowage/sessions";
import { sampleSessionBlob } from "@stowage/sessions/testing";
import { textItem } from "@stowage/thread-items";
import { createUploadArtifactTool, loadUploadArtifactTool, uploadArtifact } from "@stowage/uploads/agent";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoScreenshot } from "../src/demo/screenshot.js";
import { errorCode, startTestApp, type TestApp } from "./support/test-app.js";

// The design documents' rows (issue 20) that are behaviours of the app, checked over HTTP.
let app: TestApp;
let key: string;
let dir: string;

beforeAll(async () => {
  app = await startTestApp();
  key = await app.keyFor({ kind: "user", id: "designer" });
  dir = await mkdtemp(join(tmpdir(), "stowage-design-"));
});
afterAll(async () => {
  await app.close();
  await rm(dir, { recursive: true, force: true });
});

async function register(sessionId: string): Promise<void> {
  expect((await app.call("/agents/sessions", { key, json: { sessionId } })).status).toBe(201);
}

/** Uploads the demo's screenshot as `name` into a session of `target`, as an agent does. */
async function uploadScreenshot(target: TestApp, apiKey: string, sessionId: string, name: string) {
  const file = join(dir, name);
  await writeFile(file, demoScreenshot());
  const result = await uploadArtifact({
    filePath: file,
    agentSessionId: sessionId,
    accessToken: apiKey,
    apiBase: target.url,
  });
  expect(result).toMatchObject({ success: true, filename: name });
}

describe("uploads (document 004)", () => {
  it("an agent that knows only the document's environment variables uploads a file", async () => {
    const sessionId = randomUUID();
    await register(sessionId);
    const file = join(dir, "screenshot.png");
    await writeFile(file, demoScreenshot());
    // Only CONTINUE_API_BASE, CONTINUE_API_KEY and AGENT_SESSION_ID, as the document's agents have.
    const env = { CONTINUE_API_BASE: `${app.url}/`, CONTINUE_API_KEY: key, AGENT_SESSION_ID: sessionId };
    const result = await uploadArtifact({ filePath: file, env });
    expect(result).toMatchObject({ success: true, filename: "screenshot.png" });
    const listed = (await (await app.call(`/agents/${sessionId}/artifacts`, { key })).json()) as {
      artifacts: { filename: string }[];
    };
    expect(listed.artifacts.map((upload) => upload.filename)).toEqual(["screenshot.png"]);
  });

  it("deleting a session's uploads removes them all, and the quota follows", async () => {
    const sessionId = randomUUID();
    await register(sessionId);
    for (const name of ["a.png", "b.png"]) await uploadScreenshot(app, key, sessionId, name);
    const deleted = await app.call(`/agents/sessions/${sessionId}/uploads`, { key, method: "DELETE" });
    expect(deleted.status).toBe(200);
    expect(((await deleted.json()) as { deletedObjects: number }).deletedObjects).toBe(2);
    const listed = (await (await app.call(`/agents/${sessionId}/artifacts`, { key })).json()) as {
      artifacts: unknown[];
    };
    expect(listed.artifacts).toEqual([]);
    const usage = await app.server.services.uploads.usage({ kind: "user", id: "designer" }, sessionId);
    expect(usage.usedBytes).toBe(0);
  });

  it("the retention sweep has a dry run that deletes nothing, then deletes what is past retention", async () => {
    const sessionId = randomUUID();
    await register(sessionId);
    await uploadScreenshot(app, key, sessionId, "old.png");
    const { uploads } = app.server.services;
    const future = new Date(Date.now() + 3 * 86_400_000);
    const dry = await uploads.sweepUploads({ olderThanDays: 2, dryRun: true, now: future });
    expect(dry.uploads.map((upload) => upload.filename)).toContain("old.png");
    expect(
      (await (await app.call(`/agents/${sessionId}/artifacts`, { key })).json()) as object,
    ).toMatchObject({
      artifacts: [expect.objectContaining({ filename: "old.png" })],
    });
    const swept = await uploads.sweepUploads({ olderThanDays: 2, now: future });
    expect(swept.uploads.map((upload) => upload.filename)).toContain("old.png");
    const listed = (await (await app.call(`/agents/${sessionId}/artifacts`, { key })).json()) as {
      artifacts: unknown[];
    };
    expect(listed.artifacts).toEqual([]);
  });
});

describe("deleting a session (DELETE /agents/sessions/:id)", () => {
  it("removes everything of the session, answers 404 for another's, and the quota follows", async () => {
    const owner = { kind: "user", id: "designer" } as const;
    const bobKey = await app.keyFor({ kind: "user", id: "bob" });
    const sessionId = randomUUID();
    // The session as a run leaves it: registered (with its session file), an upload, two
    // threads of its job, two hot-state versions, a model call's metrics, a stored session, an artifact.
    await register(sessionId);
    // Bob has a session with the same id: another session, which stays.
    expect((await app.call("/agents/sessions", { key: bobKey, json: { sessionId } })).status).toBe(201);
    await uploadScreenshot(app, key, sessionId, "kept-until-deleted.png");
    for (const alias of ["main", "review"]) {
      expect(
        (await app.call(`/threads/${sessionId}/${alias}/items`, { key, json: textItem(alias) })).status,
      ).toBe(201);
    }
    expect(
      (await app.call(`/threads/${sessionId}/main/items`, { key: bobKey, json: textItem("bob's") })).status,
    ).toBe(201);
    for (const expected_version of [0, 1]) {
      const written = await app.call(`/sessions/${sessionId}/hot-state`, {
        key,
        method: "PUT",
        json: { expected_version, state: { session_id: sessionId, objective: "ship" } },
      });
      expect(written.status).toBe(201);
    }
    const metrics = await app.call(`/sessions/${sessionId}/prompt-metrics`, {
      key,
      json: { system_prompt: "You are the dispatcher.", user_prompt: "go on" },
    });
    expect(metrics.status).toBe(201);
    const stored = await app.call(`/requests/req-${sessionId.slice(0, 8)}/session-blobs`, {
      key,
      json: toTransport(sampleSessionBlob({ sessionId })),
    });
    expect(stored.status).toBe(201);
    const session = await app.server.services.tenant(owner).agentSessions.get(sessionId);
    await session.artifacts.saveArtifact("bash", "npm test\n");

    // Bob cannot delete it: to him it does not exist (his own session of that id is another).
    const refused = await app.call(`/agents/sessions/${randomUUID()}`, { key: bobKey, method: "DELETE" });
    expect(refused.status).toBe(404);
    expect(await errorCode(refused)).toBe("NOT_FOUND");

    const deleted = await app.call(`/agents/sessions/${sessionId}`, { key, method: "DELETE" });
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toMatchObject({
      sessionId,
      uploads: { deletedObjects: 1, deletedBytes: demoScreenshot().byteLength },
      threads: 2,
      sessionBlobs: 1,
      agentSessions: true,
    });
    // Every read of it is 404 now; nothing of it is listed.
    for (const path of [
      `/agents/${sessionId}/artifacts`,
      `/sessions/${sessionId}`,
      `/sessions/${sessionId}/hot-state`,
      `/sessions/${sessionId}/prompt-metrics`,
      `/session-blobs/${sessionId}`,
    ]) {
      const read = await app.call(path, { key });
      expect({ path, status: read.status }).toEqual({ path, status: 404 });
    }
    // A thread never posted to reads as an empty one; the job's threads are gone from the listing.
    expect(await (await app.call(`/threads/${sessionId}/main`, { key })).json()).toMatchObject({
      entries: [],
    });
    const threads = (await (await app.call("/threads", { key })).json()) as { threads: { jobId: string }[] };
    expect(threads.threads.map((thread) => thread.jobId)).not.toContain(sessionId);
    const listed = (await (await app.call("/sessions", { key })).json()) as {
      sessions: { sessionId: string }[];
    };
    expect(listed.sessions.map((listedSession) => listedSession.sessionId)).not.toContain(sessionId);
    // Deleting it again: there is nothing left.
    expect((await app.call(`/agents/sessions/${sessionId}`, { key, method: "DELETE" })).status).toBe(404);
    // Bob's session of the same id, and its thread, are untouched.
    const bobs = (await (await app.call(`/threads/${sessionId}/main`, { key: bobKey })).json()) as {
      entries: unknown[];
    };
    expect(JSON.stringify(bobs.entries)).toContain("bob's");
    expect((await app.call(`/sessions/${sessionId}`, { key: bobKey })).status).toBe(200);
    // The id can be registered and used again from scratch: no hot state, no quota used.
    await register(sessionId);
    expect((await app.call(`/sessions/${sessionId}/hot-state`, { key })).status).toBe(404);
    expect(await app.server.services.uploads.usage(owner, sessionId)).toMatchObject({
      usedBytes: 0,
      objects: 0,
    });
  });

  it("deletes only its own stored sessions: another session stored for the same request stays", async () => {
    const bobKey = await app.keyFor({ kind: "user", id: "bob" });
    const [doomed, neighbour] = [randomUUID(), randomUUID()];
    const requestId = `req-${randomUUID()}`;
    const store = async (apiKey: string, sessionId: string) => {
      const sample = sampleSessionBlob({ sessionId });
      const stored = await app.call(`/requests/${requestId}/session-blobs`, {
        key: apiKey,
        json: toTransport(sample),
      });
      expect(stored.status).toBe(201);
      return sample;
    };
    // Two sessions of the designer stored for one request, and bob's session of the doomed id
    // stored for a request of the same id.
    for (const sessionId of [doomed, neighbour]) await register(sessionId);
    expect((await app.call("/agents/sessions", { key: bobKey, json: { sessionId: doomed } })).status).toBe(
      201,
    );
    await store(key, doomed);
    const kept = await store(key, neighbour);
    await store(bobKey, doomed);

    const deleted = await app.call(`/agents/sessions/${doomed}`, { key, method: "DELETE" });
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toMatchObject({ sessionId: doomed, sessionBlobs: 1 });
    expect((await app.call(`/session-blobs/${doomed}`, { key })).status).toBe(404);
    // The neighbour's stored session is still the request's, blob and all.
    const latest = await app.call(`/requests/${requestId}/session-blobs/latest`, { key });
    expect(latest.status).toBe(200);
    expect(await latest.json()).toMatchObject({ ...toTransport(kept), agentType: "claude-code" });
    expect((await app.call(`/session-blobs/${neighbour}`, { key })).status).toBe(200);
    // Bob's session of the same id and request is another principal's: untouched.
    const bobs = await app.call(`/session-blobs/${doomed}`, { key: bobKey });
    expect(bobs.status).toBe(200);
    expect(await bobs.json()).toMatchObject({ sessionId: doomed, requestId });
  });
});

describe("an app configured away from the defaults", () => {
  // Retention of 0.00003 days (2.6 s), swept every second; 3 MiB a file (the default is 50).
  let configured: TestApp;
  beforeAll(async () => {
    configured = await startTestApp({
      STOWAGE_UPLOAD_RETENTION_DAYS: "0.00003",
      STOWAGE_SWEEP_INTERVAL_SECONDS: "1",
      ARTIFACT_MAX_FILE_SIZE_MB: "3",
    });
  });
  afterAll(() => configured?.close());

  it("the UploadArtifact tool states and checks the live policy the app enforces", async () => {
    const ownerKey = await configured.keyFor({ kind: "user", id: "tooled" });
    const sessionId = randomUUID();
    await configured.call("/agents/sessions", { key: ownerKey, json: { sessionId } });
    const options = {
      apiBase: configured.url,
      accessToken: ownerKey,
      agentSessionId: sessionId,
      env: {},
      root: dir,
    };
    const tool = await loadUploadArtifactTool(options);
    expect(tool.policySource).toBe("server");
    expect(tool.description).toContain("Maximum file size: 3MB.");
    await writeFile(join(dir, "four.log"), new Uint8Array(4 * 1024 * 1024));
    const refused = await tool.run({ filePath: "four.log" });
    // Refused on the agent before any request, as the server would refuse it.
    expect(refused.result).toMatchObject({ success: false, code: "TOO_LARGE", attempts: 0 });
    // The document's defaults would have let it through to the server.
    expect(createUploadArtifactTool(options).policy.maxFileSizeBytes).toBe(50 * 1024 * 1024);
  });

  it("the sweeper deletes uploads past STOWAGE_UPLOAD_RETENTION_DAYS on its own timer, and the quota follows", async () => {
    const owner = { kind: "user", id: "retained" } as const;
    const ownerKey = await configured.keyFor(owner);
    const sessionId = randomUUID();
    const registered = await configured.call("/agents/sessions", { key: ownerKey, json: { sessionId } });
    expect(registered.status).toBe(201);
    await uploadScreenshot(configured, ownerKey, sessionId, "short-lived.png");
    // Nothing here calls the sweep: the server's timer does.
    const listing = async () =>
      (
        (await (await configured.call(`/agents/${sessionId}/artifacts`, { key: ownerKey })).json()) as {
          artifacts: unknown[];
        }
      ).artifacts;
    // Expired, it leaves the listing at once but stays counted until the sweep deletes it (with the
    // test app's STOWAGE_TRASH_DAYS=0, the first sweep after its expiry).
    const used = async () => (await configured.server.services.uploads.usage(owner, sessionId)).usedBytes;
    const deadline = Date.now() + 60_000;
    while ((await used()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
    expect(await used()).toBe(0);
    expect(await listing()).toEqual([]);
  });
});

describe("thread items (document 003)", () => {
  it("stamps the caller as the author of every posted item", async () => {
    const thread = `/threads/job-${randomUUID().slice(0, 8)}/main`;
    const response = await app.call(`${thread}/items`, {
      key,
      json: { ...textItem("hello"), user_id: "somebody-else" },
    });
    expect(response.status).toBe(201);
    expect(((await response.json()) as { item: { user_id: string } }).item.user_id).toBe("user:designer");
  });

  it("a thread whose item stays over budget after the drop stage fails, says so, and refuses later posts", async () => {
    const thread = `/threads/job-${randomUUID().slice(0, 8)}/main`;
    expect((await app.call(`${thread}/items`, { key, json: textItem("before") })).status).toBe(201);
    // A field the budget cannot cut (the schema keeps unknown fields) keeps the item over 350 KB.
    const huge = { ...textItem("t".repeat(1000)), extra: "e".repeat(400_000) };
    const refused = await app.call(`${thread}/items`, { key, json: huge });
    expect(refused.status).toBe(413);
    expect(((await refused.json()) as { reason?: string }).reason).toBe("THREAD_ITEM_TOO_LARGE");
    const read = (await (await app.call(thread, { key })).json()) as {
      status: string;
      failure?: { reason: string };
    };
    expect(read.status).toBe("failed");
    expect(read.failure?.reason).toBe("THREAD_ITEM_TOO_LARGE");
    const later = await app.call(`${thread}/items`, { key, json: textItem("after") });
    expect(later.status).toBe(409);
    expect(await errorCode(later)).toBe("CONFLICT");
  });
});
