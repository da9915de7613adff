// Where the GC protocol differs: on S3 a put of a stored blob writes its touch record (an empty
// PUT) beside a HEAD of the blob, then reads it back (GET, compared); a touch would be a
// CopyObject of the whole blob. Baseline: one PutObject of the same bytes, the least any S3 content store does.
import { randomUUID } from "node:crypto";
import type { BenchCase } from "@stowage/bench-kit";
import { createBlobStore } from "@stowage/blob-store";
import { createS3Client, createS3ObjectStore } from "@stowage/storage-s3";
import { s3TestEnv } from "@stowage/test-support";

export const rgw = s3TestEnv("blob-store bench");

const PUTS = 40;
const KIB = 1024;

export function rgwCases(): { cases: BenchCase[]; cleanup: () => Promise<void> } {
  const store = createS3ObjectStore({
    client: createS3Client({
      endpoint: rgw.values.S3_ENDPOINT,
      region: process.env.S3_REGION || "us-east-1",
      accessKeyId: rgw.values.S3_ACCESS_KEY_ID,
      secretAccessKey: rgw.values.S3_SECRET_ACCESS_KEY,
    }),
    bucket: rgw.values.S3_BUCKET!,
    prefix: `bench/blob-store/${randomUUID()}/`,
  });
  const blobs = createBlobStore({ store });
  const cases = [4 * KIB, 1024 * KIB].map((size): BenchCase => {
    const body = new Uint8Array(size).fill(size % 251);
    const label = size >= 1024 * KIB ? `${size / 1024 / KIB} MiB` : `${size / KIB} KiB`;
    return {
      name: `${PUTS} puts of ${label} already stored on Ceph RGW (HEAD beside the touch record, then GET) vs ${PUTS} PutObjects`,
      target: { kind: "time", max: 4 },
      units: { count: PUTS, label: "ops" },
      rounds: 5,
      async prepare() {
        await blobs.put(body);
      },
      async ours() {
        for (let i = 0; i < PUTS; i++) await blobs.put(body);
      },
      async baseline() {
        for (let i = 0; i < PUTS; i++) await store.put("raw", body);
      },
    };
  });
  const cleanup = async () => {
    for await (const item of store.iterate({ prefix: "" })) await store.delete(item.key);
  };
  return { cases, cleanup };
}
