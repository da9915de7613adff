import { createHash, randomBytes, randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { integrationEnv } from "@stowage/core/testing";
import { s3TestEnv } from "@stowage/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Replica, startReplica } from "./support/replica.js";

// Two app processes on one PostgreSQL and one S3 (Ceph RGW in CI) must behave as one service.
const database = integrationEnv("reference app replicas (PostgreSQL)", ["DATABASE_URL"]);
const s3 = s3TestEnv("reference app replicas");
const ready = database.ready && s3.ready;

const QUOTA_BYTES = 10_000;
/** Requests a minute per key and per address, low enough to reach, high enough for the tests. */
const RATE_LIMIT = 60;
const FILE_BYTES = 1_000;

describe.skipIf(!ready)("two app processes on PostgreSQL and S3", () => {
  let a: Replica;
  let b: Replica;
  let key: string;
  const dirs: string[] = [];
  const sessionId = `replicas-${randomUUID()}`;

  beforeAll(async () => {
    const env = {
      ...(process.env as Record<string, string>),
      ...database.values,
      ...s3.values,
      // Every S3_* the environment has (the region) reaches both…
      ...Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith("S3_"))),
      STOWAGE_SIGNING_SECRET: randomBytes(32).toString("hex"),
      ARTIFACT_MAX_TOTAL_SIZE_MB: String(QUOTA_BYTES / 1024 / 1024),
      STOWAGE_RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT),
      // Behind one proxy: the flood below comes from an address of its own (X-Forwarded-For), so
      // it blocks nobody else using this database (the buckets outlive the test).
      STOWAGE_TRUST_PROXY: "1",
    } as Record<string, string>;
    // …except whether the server checks upload checksums: the app runs on its default, which must
    // verify uploads by hashing (RGW 16 stores bodies that miss the signed checksum).
    delete env.S3_VERIFIES_UPLOAD_CHECKSUMS;
    for (let i = 0; i < 2; i++) dirs.push(await mkdtemp(join(tmpdir(), "stowage-replica-")));
    [a, b] = await Promise.all([
      startReplica(dirs[0]!, { ...env, ISSUE_KEY_FOR: "user:replicated" }),
      startReplica(dirs[1]!, env),
    ]);
    key = a.key!;
    const registered = await call(b, "/agents/sessions", { sessionId });
    expect(registered.status).toBe(201);
  });

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  function call(
    replica: Replica,
    path: string,
    json?: unknown,
    method = json === undefined ? "GET" : "POST",
  ) {
    return fetch(`${replica.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(json === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(json === undefined ? {} : { body: JSON.stringify(json) }),
    });
  }

  it("a key issued by one process works on the other, and a session registered on one exists on both", async () => {
    expect((await call(a, "/threads")).status).toBe(200);
    expect((await call(b, "/threads")).status).toBe(200);
    const listed = await call(a, `/agents/${sessionId}/artifacts`);
    expect(listed.status).toBe(200);
  });

  it("20 concurrent upload requests spread over both processes never grant more than the session's quota", async () => {
    const requests = Array.from({ length: 20 }, (_, i) =>
      call(i % 2 === 0 ? a : b, "/agents/artifacts/upload-url", {
        agentSessionId: sessionId,
        filename: `part-${i}.txt`,
        contentType: "text/plain",
        fileSize: FILE_BYTES,
      }),
    );
    const responses = await Promise.all(requests);
    const granted = responses.filter((response) => response.status === 200);
    const refused = responses.filter((response) => response.status !== 200);
    for (const response of refused) {
      expect(response.status).toBe(400);
      expect(((await response.json()) as { code: string }).code).toBe("QUOTA_EXCEEDED");
    }
    expect(granted.length * FILE_BYTES).toBeLessThanOrEqual(QUOTA_BYTES);
    expect(granted.length).toBe(Math.floor(QUOTA_BYTES / FILE_BYTES));
  });

  it("an item posted on one process reaches a live subscriber on the other", async () => {
    const thread = `/threads/job-${randomUUID().slice(0, 8)}/main`;
    const controller = new AbortController();
    const response = await fetch(`${b.url}${thread}/events`, {
      headers: { authorization: `Bearer ${key}` },
      signal: controller.signal,
    });
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let received = "";
    const until = async (text: string) => {
      const deadline = Date.now() + 15_000;
      while (!received.includes(text)) {
        if (Date.now() > deadline) throw new Error(`no "${text}" in ${received}`);
        received += (await reader.read()).value ?? "";
      }
    };
    await until("event: ready");
    const posted = await call(a, `${thread}/items`, { content: [{ type: "text", text: "from process a" }] });
    expect(posted.status).toBe(201);
    await until("from process a");
    controller.abort();
    // And either process reads the thread.
    const read = (await (await call(b, thread)).json()) as { entries: unknown[] };
    expect(JSON.stringify(read.entries)).toContain("from process a");
  });

  it("a same-length upload with other bytes is refused at completion and never served (S3_VERIFIES_UPLOAD_CHECKSUMS unset)", async () => {
    // A session of its own: the quota test above has reserved all of the first one's bytes.
    const fresh = `replicas-${randomUUID()}`;
    expect((await call(a, "/agents/sessions", { sessionId: fresh })).status).toBe(201);
    const honest = randomBytes(500);
    const other = Buffer.from(honest).fill(0x41);
    const grant = (await (
      await call(a, "/agents/artifacts/upload-url", {
        agentSessionId: fresh,
        filename: "tampered.png",
        contentType: "image/png",
        fileSize: honest.byteLength,
        sha256: createHash("sha256").update(honest).digest("hex"),
      })
    ).json()) as { url: string; headers: Record<string, string> };
    // The body has the signed length and the signed checksum header, but other bytes.
    const put = await fetch(grant.url, { method: "PUT", headers: grant.headers, body: other });
    await put.arrayBuffer();
    const completed = await call(b, "/agents/artifacts/complete", {
      agentSessionId: fresh,
      filename: "tampered.png",
    });
    expect(completed.status).toBe(422);
    expect(((await completed.json()) as { reason?: string }).reason).toBe("UPLOAD_MISMATCH");
    const listed = (await (await call(a, `/agents/${fresh}/artifacts`)).json()) as {
      artifacts: { filename: string }[];
    };
    expect(listed.artifacts.map((upload) => upload.filename)).not.toContain("tampered.png");
    expect((await call(b, `/agents/${fresh}/artifacts/tampered.png/download`)).status).toBe(404);
  });

  it("failed keys from one address are counted once across both processes (the limits live in PostgreSQL)", async () => {
    const address = `10.${randomBytes(3).join(".")}`;
    const statuses: number[] = [];
    for (let i = 0; i < RATE_LIMIT + 2; i++) {
      const response = await fetch(`${(i % 2 === 0 ? a : b).url}/sessions`, {
        headers: {
          authorization: `Bearer stw_${randomUUID().replaceAll("-", "").slice(0, 12)}_${"x".repeat(43)}`,
          "x-forwarded-for": address,
        },
      });
      statuses.push(response.status);
    }
    expect(statuses.slice(0, RATE_LIMIT).every((status) => status === 401)).toBe(true);
    expect(statuses.slice(RATE_LIMIT)).toEqual([429, 429]);
  });
});
