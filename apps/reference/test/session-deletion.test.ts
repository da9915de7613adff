// Deleting a session on the embedded defaults (the file system's signed URLs, PGlite): what an
// upload URL handed out before the deletion can still do (nothing), and a deletion cut short.
import { randomBytes, randomUUID } from "node:crypto";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  callAs,
  expectRegisteredAgainEmpty,
  RACE_FILE_BYTES,
  raceUploadsWithDeletion,
} from "./support/deletion-race.js";
import { type Replica, startReplica } from "./support/replica.js";
import { seedEmbeddedDatabase } from "./support/seed-embedded-database.js";
import { startTestApp, type TestApp } from "./support/test-app.js";

const UPLOADS = 20;
/** Room for exactly the race's uploads: a URL whose reservation outlived the deletion leaves too little. */
const LIMIT_MB = String((UPLOADS * RACE_FILE_BYTES) / 1024 / 1024);

/** Every file below `dir`, relative to it; none when it does not exist. */
async function filesBelow(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
}

describe("deleting a session while its uploads run, one app process on the embedded defaults", () => {
  let replica: Replica;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "stowage-deletion-"));
    await seedEmbeddedDatabase(dataDir);
    const env = Object.fromEntries(
      Object.entries(process.env).filter(
        ([name]) => !name.startsWith("S3_") && !name.startsWith("DATABASE_") && !name.startsWith("STOWAGE_"),
      ),
    ) as Record<string, string>;
    replica = await startReplica(dataDir, {
      ...env,
      ISSUE_KEY_FOR: `user:deleter-${randomUUID().slice(0, 8)}`,
      STOWAGE_SIGNING_SECRET: randomBytes(32).toString("hex"),
      ARTIFACT_MAX_FILE_SIZE_MB: LIMIT_MB,
      ARTIFACT_MAX_TOTAL_SIZE_MB: LIMIT_MB,
      // The deletion itself, not the trash before it.
      STOWAGE_TRASH_DAYS: "0",
    });
  });

  afterAll(async () => {
    await replica?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("20 uploads racing a DELETE: nothing left on disk, nothing listed afterwards, the quota back to zero", async () => {
    const sessionId = `race-${randomUUID()}`;
    const target = {
      uploader: replica.url,
      deleter: replica.url,
      key: replica.key!,
      sessionId,
      uploads: UPLOADS,
    };
    const outcome = await raceUploadsWithDeletion(target);
    console.log(
      `[deletion race, fs + PGlite] DELETE ${outcome.deletion}; uploads ${outcome.uploads.join(" ")}`,
    );
    expect(outcome.deletion).toBe(200);
    const health = (await (await fetch(`${replica.url}/healthz`)).json()) as { uploads: string };
    expect(health.uploads).toBe("fs-signed");
    const policy = (await (await callAs(replica.key!, replica.url, "/agents/artifacts/policy")).json()) as {
      maxTotalSizeBytes: number;
    };
    const owned = join(dataDir, "objects", "sessions", "user");
    expect((await filesBelow(owned)).filter((path) => path.includes(sessionId))).toEqual([]);
    await expectRegisteredAgainEmpty(target, policy.maxTotalSizeBytes);
  });

  it("an upload whose body is still arriving when the session is deleted stores nothing: 403 UPLOAD_REVOKED", async () => {
    const key = replica.key!;
    const sessionId = `slow-${randomUUID()}`;
    expect((await callAs(key, replica.url, "/agents/sessions", { json: { sessionId } })).status).toBe(201);
    const body = new Uint8Array(RACE_FILE_BYTES).fill(7);
    const grant = (await (
      await callAs(key, replica.url, "/agents/artifacts/upload-url", {
        json: {
          agentSessionId: sessionId,
          filename: "slow.txt",
          contentType: "text/plain",
          fileSize: body.byteLength,
        },
      })
    ).json()) as { url: string; headers: Record<string, string> };
    let deleted!: () => void;
    const afterDeletion = new Promise<void>((resolve) => {
      deleted = resolve;
    });
    // Half the body, then the rest only once the DELETE has answered.
    const stream = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(body.subarray(0, 500));
        await afterDeletion;
        controller.enqueue(body.subarray(500));
        controller.close();
      },
    });
    const put = fetch(grant.url, {
      method: "PUT",
      headers: grant.headers,
      body: stream,
      duplex: "half",
    } as RequestInit);
    const deletion = await callAs(key, replica.url, `/agents/sessions/${sessionId}`, { method: "DELETE" });
    expect(deletion.status).toBe(200);
    deleted();
    const response = await put;
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ code: "FORBIDDEN", reason: "UPLOAD_REVOKED" });
    const owned = join(dataDir, "objects", "sessions", "user");
    expect((await filesBelow(owned)).filter((path) => path.includes(sessionId))).toEqual([]);
  });
});

describe("a session being deleted", () => {
  let app: TestApp;
  let key: string;
  beforeAll(async () => {
    app = await startTestApp();
    key = await app.keyFor({ kind: "user", id: "alice" });
  });
  afterAll(() => app.close());

  it("is found by nothing and cannot be registered again until its DELETE is sent again and finishes", async () => {
    const sessionId = randomUUID();
    expect((await app.call("/agents/sessions", { key, json: { sessionId } })).status).toBe(201);
    // A deletion cut short right after it marked the session.
    await app.server.services
      .tenant({ kind: "user", id: "alice" })
      .registeredSessions.markDeleting(sessionId);
    const grant = await app.call("/agents/artifacts/upload-url", {
      key,
      json: { agentSessionId: sessionId, filename: "a.txt", contentType: "text/plain", fileSize: 1 },
    });
    expect(grant.status).toBe(404);
    expect((await app.call(`/sessions/${sessionId}/hot-state/dispatcher`, { key, json: {} })).status).toBe(
      404,
    );
    const again = await app.call("/agents/sessions", { key, json: { sessionId } });
    expect(again.status).toBe(409);
    expect(((await again.json()) as { reason?: string }).reason).toBe("SESSION_DELETING");
    expect((await app.call(`/agents/sessions/${sessionId}`, { key, method: "DELETE" })).status).toBe(200);
    expect((await app.call("/agents/sessions", { key, json: { sessionId } })).status).toBe(201);
  });
});
