// Deleting a session while its uploads run, on the real services: two app processes on one
// PostgreSQL and one S3 (Ceph RGW), the uploads through one process, the DELETE through the other.
// RGW takes a PUT through a URL the deletion revoked (it cannot be told otherwise): the app
// refuses it at completion and deletes it, so nothing is left and nothing counts.
import { randomBytes, randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ObjectStore } from "@stowage/core";
import { integrationEnv } from "@stowage/core/testing";
import { connectPostgres } from "@stowage/storage-postgres";
import { s3TestEnv } from "@stowage/test-support";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { s3StoreFor } from "../src/shared-store.js";
import {
  callAs,
  expectRegisteredAgainEmpty,
  RACE_FILE_BYTES,
  raceUploadsWithDeletion,
} from "./support/deletion-race.js";
import { type Replica, startReplica } from "./support/replica.js";

const database = integrationEnv("session deletion on PostgreSQL", ["DATABASE_URL"]);
const s3 = s3TestEnv("session deletion on S3");
const ready = database.ready && s3.ready;

const UPLOADS = 20;
const LIMIT_MB = String((UPLOADS * RACE_FILE_BYTES) / 1024 / 1024);

describe.skipIf(!ready)(
  "deleting a session while its uploads run, two app processes on PostgreSQL and S3",
  () => {
    let a: Replica;
    let b: Replica;
    let owner: string;
    let bucket: ObjectStore;
    const dirs: string[] = [];

    beforeAll(async () => {
      owner = `deleter-${randomUUID().slice(0, 8)}`;
      const env = {
        ...(process.env as Record<string, string>),
        ...database.values,
        ...s3.values,
        ...Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith("S3_"))),
        STOWAGE_SIGNING_SECRET: randomBytes(32).toString("hex"),
        ARTIFACT_MAX_FILE_SIZE_MB: LIMIT_MB,
        ARTIFACT_MAX_TOTAL_SIZE_MB: LIMIT_MB,
        // Often, so that what revoked URLs wrote after a DELETE is seen to go within the test.
        STOWAGE_SWEEP_INTERVAL_SECONDS: "1",
        // The deletion itself, not the trash before it.
        STOWAGE_TRASH_DAYS: "0",
      } as Record<string, string>;
      // The app's default for S3: every upload hashed on completion (RGW does not check the SHA-256).
      delete env.S3_VERIFIES_UPLOAD_CHECKSUMS;
      for (let i = 0; i < 2; i++) dirs.push(await mkdtemp(join(tmpdir(), "stowage-deletion-replica-")));
      [a, b] = await Promise.all([
        startReplica(dirs[0]!, { ...env, ISSUE_KEY_FOR: `user:${owner}` }),
        startReplica(dirs[1]!, env),
      ]);
      const config = await loadConfig(env, dirs[0]!);
      bucket = await s3StoreFor(config.s3!);
    });

    afterAll(async () => {
      await Promise.all([a?.stop(), b?.stop()]);
      await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
    });

    it("20 uploads racing a DELETE: nothing left in the bucket, nothing listed afterwards, the quota back to zero", async () => {
      const sessionId = `race-${randomUUID()}`;
      const target = { uploader: a.url, deleter: b.url, key: a.key!, sessionId, uploads: UPLOADS };
      const outcome = await raceUploadsWithDeletion(target);
      console.log(
        `[deletion race, PostgreSQL + RGW] DELETE ${outcome.deletion}; uploads ${outcome.uploads.join(" ")}`,
      );
      expect(outcome.deletion).toBe(200);
      const prefix = `sessions/user/${owner}/${sessionId}/`;
      const left: string[] = [];
      for await (const item of bucket.iterate({ prefix })) left.push(item.key);
      expect(left).toEqual([]);

      // The ledger, as every process shares it: no byte used, no reservation left.
      const connection = await connectPostgres({ url: database.values.DATABASE_URL! });
      try {
        const result = await connection.db.execute(sql`
        SELECT s.used_bytes::int AS used, s.object_count AS objects, s.revocations,
          (SELECT count(*)::int FROM quota_reservations r WHERE r.scope = s.scope) AS reservations
        FROM quota_scopes s WHERE s.scope = ${prefix}`);
        expect((result as { rows: unknown[] }).rows).toEqual([
          { used: 0, objects: 0, revocations: 1, reservations: 0 },
        ]);
      } finally {
        await connection.close();
      }
      const policy = (await (await callAs(a.key!, a.url, "/agents/artifacts/policy")).json()) as {
        maxTotalSizeBytes: number;
      };
      await expectRegisteredAgainEmpty(target, policy.maxTotalSizeBytes);
    });

    it("what a URL handed out before the DELETE writes after it, never completed nor listed, is deleted by the sweep", async () => {
      const sessionId = `left-${randomUUID()}`;
      const call = (base: string, path: string, init: { method?: string; json?: unknown } = {}) =>
        callAs(a.key!, base, path, init);
      expect((await call(a.url, "/agents/sessions", { json: { sessionId } })).status).toBe(201);
      const body = new Uint8Array(randomBytes(RACE_FILE_BYTES));
      const granted = await call(a.url, "/agents/artifacts/upload-url", {
        json: {
          agentSessionId: sessionId,
          filename: "left.txt",
          contentType: "text/plain",
          fileSize: body.byteLength,
        },
      });
      const grant = (await granted.json()) as { url: string; headers: Record<string, string> };
      expect((await call(b.url, `/agents/sessions/${sessionId}`, { method: "DELETE" })).status).toBe(200);
      // RGW takes it: a presigned PUT cannot be taken back.
      const put = await fetch(grant.url, { method: "PUT", headers: grant.headers, body });
      expect(put.status).toBe(200);
      const prefix = `sessions/user/${owner}/${sessionId}/`;
      const left = async () => {
        const keys: string[] = [];
        for await (const item of bucket.iterate({ prefix })) keys.push(item.key);
        return keys;
      };
      const deadline = Date.now() + 20_000;
      while ((await left()).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
      expect(await left()).toEqual([]);
    });
  },
);
