// Uploads with encryption at rest (STOWAGE_ENCRYPTION_KEY): on the embedded default and on Ceph
// RGW, an upload's bytes pass through the app, which seals them; the stored object holds no
// plaintext, the listing gives the file's own size, a download gives the file back, and a
// tampered object is refused, never served as garbage. On S3 the grant is the app's URL, never a
// presigned S3 one (which would carry the bytes past the seal).
import { randomBytes, randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ObjectStore } from "@stowage/core";
import { createFsObjectStore } from "@stowage/storage-fs";
import { createS3Client, createS3ObjectStore } from "@stowage/storage-s3";
import { s3OptionsFromEnv } from "@stowage/storage-s3/env";
import { s3TestEnv } from "@stowage/test-support";
import { uploadFile } from "@stowage/uploads/agent";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./support/test-app.js";

const s3 = s3TestEnv("sealed uploads on S3");
const KEY = randomBytes(32).toString("base64");

/** What an operator with the disk or the bucket reads: the store under the app, unsealed. */
const backends: [string, boolean, Record<string, string>, (dataDir: string) => ObjectStore][] = [
  ["the embedded default", true, {}, (dataDir) => createFsObjectStore({ root: join(dataDir, "objects") })],
  [
    "Ceph RGW (S3)",
    s3.ready,
    s3.values as Record<string, string>,
    () => {
      const options = s3OptionsFromEnv(s3.values)!;
      return createS3ObjectStore({ client: createS3Client(options.client), bucket: options.bucket });
    },
  ],
];

describe.each(backends)("sealed uploads on %s", (_name, ready, env, rawStoreOf) => {
  let app: TestApp;
  let dir: string;
  beforeAll(async () => {
    if (!ready) return;
    // The app keeps its records at the bucket's root, where an earlier run left key records
    // wrapped by its own random key-encryption key: this run's deployment starts without them.
    if (env.S3_BUCKET !== undefined) {
      const raw = rawStoreOf("");
      for await (const item of raw.iterate({ prefix: "encryption-keys/" })) await raw.delete(item.key);
    }
    app = await startTestApp({ ...env, STOWAGE_ENCRYPTION_KEY: KEY });
    dir = await mkdtemp(join(tmpdir(), "stowage-sealed-upload-"));
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it.skipIf(!ready)(
    "are stored sealed, listed and downloaded as sent, and refused once tampered with",
    async () => {
      const key = await app.keyFor({ kind: "user", id: `sealed-${randomUUID().slice(0, 8)}` });
      const sessionId = randomUUID();
      expect((await app.call("/agents/sessions", { key, json: { sessionId } })).status).toBe(201);
      const secret = `known-secret-${randomUUID()}`;
      // More than one 64 KiB segment of the seal, the secret in the first and the last.
      const content = Buffer.from(
        JSON.stringify({ token: secret, padding: "x".repeat(150_000), again: secret }),
      );
      const file = join(dir, "env.json");
      await writeFile(file, content);

      // The grant points at the app, whatever the backend.
      const grant = (await (
        await app.call("/agents/artifacts/upload-url", {
          key,
          json: {
            agentSessionId: sessionId,
            filename: "other.json",
            contentType: "application/json",
            fileSize: 2,
          },
        })
      ).json()) as { url: string };
      expect(new URL(grant.url).origin).toBe(new URL(app.url).origin);

      const uploaded = await uploadFile({ apiBase: app.url, apiKey: key, sessionId, filePath: file });
      expect(uploaded).toMatchObject({ success: true, filename: "env.json" });
      const raw = rawStoreOf(app.dataDir);
      const stored = await raw.get(uploaded.key!);
      expect(stored).not.toBeNull();
      expect(Buffer.from(stored!).includes(secret)).toBe(false);
      expect(Buffer.from(stored!).includes("xxxxxxxx")).toBe(false);

      const listed = (await (await app.call(`/agents/${sessionId}/artifacts`, { key })).json()) as {
        artifacts: { filename: string; size: number }[];
      };
      expect(listed.artifacts).toEqual([
        expect.objectContaining({ filename: "env.json", size: content.byteLength }),
      ]);
      const downloadUrl = async () =>
        (
          (await (await app.call(`/agents/${sessionId}/artifacts/env.json/download`, { key })).json()) as {
            url: string;
          }
        ).url;
      const url = await downloadUrl();
      expect(new URL(url).origin).toBe(new URL(app.url).origin);
      expect(Buffer.from(await (await fetch(url)).arrayBuffer()).equals(content)).toBe(true);

      // One byte of the stored ciphertext changed (past the header): refused, not garbage.
      const tampered = new Uint8Array(stored!);
      tampered[100] = tampered[100]! ^ 0x01;
      await raw.put(uploaded.key!, tampered, { contentType: "application/json" });
      const response = await fetch(await downloadUrl());
      const outcome = response.ok
        ? await response.arrayBuffer().then(
            () => "read",
            () => "aborted",
          )
        : "refused";
      expect(outcome).not.toBe("read");
      await raw.delete(uploaded.key!);
    },
    120_000,
  );
});
