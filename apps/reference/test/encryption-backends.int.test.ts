// Encryption at rest on the real backends: PGlite, PostgreSQL (DATABASE_URL) and Ceph RGW (S3_*).
// A deployment writes a known secret through every store of the table and a stored session; the
// raw rows and objects of the backend hold none of it, another process reads it all back, and a
// rotation rewrites the key records only. Each run has a namespace, schema or prefix of its own.
import { randomBytes, randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMemoryNotifier, type ObjectStore } from "@stowage/core";
import { expectStowageError, integrationEnv } from "@stowage/core/testing";
import { compressChunks } from "@stowage/sessions";
import {
  connectEmbedded,
  connectPostgres,
  createPostgresObjectStore,
  type StowageConnection,
} from "@stowage/storage-postgres";
import { createPostgresSessionBlobs } from "@stowage/storage-postgres/sessions";
import { createS3Client, createS3ObjectStore } from "@stowage/storage-s3";
import { s3OptionsFromEnv } from "@stowage/storage-s3/env";
import { createStowage, DEFAULT_STORES } from "@stowage/tenancy";
import { s3TestEnv } from "@stowage/test-support";
import { textItem } from "@stowage/thread-items";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const postgres = integrationEnv("encryption at rest on PostgreSQL", ["DATABASE_URL"]);
const s3 = s3TestEnv("encryption at rest on S3");
const OLD = randomBytes(32).toString("base64");
const NEW = randomBytes(32).toString("base64");
const { uploads: _u, promptMetrics: _p, agentSessions: _a, ...stores } = DEFAULT_STORES;
const text = (value: string) => new TextEncoder().encode(value);

interface Backend {
  /** The run's shared store, raw (what an operator with the bucket or the database sees). */
  shared(): ObjectStore;
  connection(): StowageConnection;
  close(): Promise<void>;
}

async function postgresBackend(connection: StowageConnection, namespace: string): Promise<Backend> {
  return {
    shared: () => createPostgresObjectStore({ db: connection.db, namespace }),
    connection: () => connection,
    close: () => connection.close(),
  };
}

const backends: [string, boolean, () => Promise<Backend>][] = [
  ["PGlite", true, async () => postgresBackend(await connectEmbedded(), "stowage")],
  [
    "PostgreSQL",
    postgres.ready,
    async () => {
      const schema = `stowage_enc_${randomBytes(5).toString("hex")}`;
      const connection = await connectPostgres({ url: postgres.values.DATABASE_URL!, schema });
      const backend = await postgresBackend(connection, "stowage");
      return {
        ...backend,
        close: async () => {
          await connection.db.execute(sql.raw(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
          await connection.close();
        },
      };
    },
  ],
  [
    "Ceph RGW (S3)",
    s3.ready,
    async () => {
      // The shared store on S3, the stored sessions in an embedded database, as an S3 deployment without DATABASE_URL.
      const options = s3OptionsFromEnv(s3.values)!;
      const client = createS3Client(options.client);
      const prefix = `test/encryption/${randomUUID()}/`;
      const connection = await connectEmbedded();
      return {
        shared: () =>
          createS3ObjectStore({ client, bucket: options.bucket, prefix, verifiesUploadChecksums: false }),
        connection: () => connection,
        close: async () => {
          const raw = createS3ObjectStore({ client, bucket: options.bucket, prefix });
          for await (const item of raw.iterate()) await raw.delete(item.key);
          await connection.close();
        },
      };
    },
  ],
];

describe.each(backends)("encryption at rest on %s", (_name, ready, open) => {
  let backend: Backend;
  let dir: string;
  beforeAll(async () => {
    if (!ready) return;
    backend = await open();
    dir = await mkdtemp(join(tmpdir(), "stowage-encryption-"));
    mkdirSync(join(dir, "agent-sessions"));
  }, 120_000);
  afterAll(async () => backend?.close(), 120_000);

  /** One process of the deployment: its own stores and key caches. */
  const deployment = (keys: string) =>
    createStowage({
      shared: backend.shared(),
      notifier: createMemoryNotifier(),
      agentSessionsDir: join(dir, "agent-sessions"),
      sessionBlobs: createPostgresSessionBlobs({ db: backend.connection().db }),
      stores,
      encryption: { env: { STOWAGE_ENCRYPTION_KEY: keys } },
    });

  it.skipIf(!ready)(
    "holds no plaintext of a secret, reads it back in another process, and rotates without rewriting content",
    async () => {
      const principal = { kind: "user", id: `enc-${randomUUID().slice(0, 8)}` } as const;
      const secret = `known-secret-${randomUUID()}`;
      const sessionId = randomUUID();
      const tenant = deployment(OLD).tenant(principal);
      await tenant.registeredSessions.register(sessionId);
      const blob = await tenant.blobs.put(text(`a file the agent read: ${secret}`));
      await tenant.threads.post(
        { jobId: sessionId, alias: "main" },
        textItem(`${secret} blob:sha256:${blob.hash}`),
      );
      await tenant.hotState
        .dispatcherFor(sessionId)
        .write({ session_id: sessionId, objective: secret }, { expectedVersion: 0 });
      await tenant.openaiAgentsSessions.session(sessionId).addItems([{ role: "user", content: secret }]);
      await tenant.agentSdkSessions.append({ projectKey: "-app", sessionId }, [
        { type: "user", uuid: sessionId, message: { role: "user", content: secret } },
      ]);
      const archive = text("{}\n");
      await tenant.sessionBlobs.create({
        requestId: "req-1",
        sessionId,
        agentType: "claude-code",
        codec: "gzip",
        blob: await compressChunks("gzip", [archive]),
        rawSizeBytes: archive.byteLength,
      });

      // What the backend holds: objects (each read raw) and the session row.
      const raw = backend.shared();
      const before = new Map<string, Buffer>();
      for await (const item of raw.iterate()) before.set(item.key, Buffer.from((await raw.get(item.key))!));
      expect(before.size).toBeGreaterThan(5);
      for (const [key, bytes] of before) expect(bytes.includes(secret), key).toBe(false);
      const rows = await backend
        .connection()
        .db.execute(sql`SELECT session_blob FROM agent_sessions WHERE owner = ${`user:${principal.id}`}`);
      const row =
        (rows as unknown as { rows?: { session_blob: Uint8Array }[] }).rows ??
        (rows as unknown as { session_blob: Uint8Array }[]);
      expect(row).toHaveLength(1);
      expect(Buffer.from(row[0]!.session_blob).subarray(0, 4).toString()).toBe("STWE");

      const again = deployment(OLD).tenant(principal);
      expect(Buffer.from((await again.blobs.get(blob.hash))!).toString()).toContain(secret);
      expect(
        JSON.stringify((await again.threads.items({ jobId: sessionId, alias: "main" })).items),
      ).toContain(secret);
      expect((await again.hotState.reader.latest(sessionId))?.json).toContain(secret);
      expect(await again.openaiAgentsSessions.session(sessionId).getItems()).toEqual([
        { role: "user", content: secret },
      ]);
      expect(await again.agentSdkSessions.load({ projectKey: "-app", sessionId })).toEqual([
        { type: "user", uuid: sessionId, message: { role: "user", content: secret } },
      ]);
      expect((await again.sessionBlobs.getBySessionId(sessionId))?.rawSizeBytes).toBe(archive.byteLength);

      const report = await deployment(`${NEW},${OLD}`).rotateEncryptionKeys();
      expect(report.rewrapped).toBeGreaterThanOrEqual(2);
      for await (const item of raw.iterate()) {
        if (item.key.startsWith("encryption-keys/")) continue;
        expect(Buffer.from((await raw.get(item.key))!).equals(before.get(item.key)!), item.key).toBe(true);
      }
      const newOnly = deployment(NEW).tenant(principal);
      expect(Buffer.from((await newOnly.blobs.get(blob.hash))!).toString()).toContain(secret);
      expect((await newOnly.sessionBlobs.getBySessionId(sessionId))?.sessionId).toBe(sessionId);
      await expectStowageError(
        deployment(OLD).tenant(principal).hotState.reader.latest(sessionId),
        "FORBIDDEN",
      );
      // Another principal reaches none of it.
      const other = deployment(NEW).tenant({ kind: "user", id: `other-${principal.id}` });
      expect(await other.sessionBlobs.getBySessionId(sessionId)).toBeNull();
      expect(await other.blobs.get(blob.hash)).toBeNull();
    },
    180_000,
  );
});
