// Benchmarks of the S3 store on a real S3 (Ceph RGW from tooling/rgw/start.sh), each against the
// raw SDK calls doing the same work, measured in the same run: what the store's validation, key
// prefixing and error mapping cost on top of the SDK.
import { randomBytes } from "node:crypto";
import { GetObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { runBenchmarks } from "@stowage/bench-kit";
import { mapConcurrent } from "@stowage/core";
import { createS3ObjectStore } from "@stowage/storage-s3";
import { bucket, emptyPrefix, s3Env, testClient, uniquePrefix } from "../test/support/s3-env.js";
import { multipartCases } from "./multipart-cases.js";

const OBJECTS_PER_RUN = 200;
const OBJECT_BYTES = 64 * 1024;
const SIGNS_PER_RUN = 2000;

if (!s3Env.ready) {
  console.log(`\nstorage-s3: ${s3Env.reason}; run eval "$(tooling/rgw/start.sh)" first`);
  process.exit(0);
}

const client = testClient();
const prefix = uniquePrefix("bench");
const store = createS3ObjectStore({ client, bucket, prefix: `${prefix}store/` });
const body = new Uint8Array(randomBytes(OBJECT_BYTES));
const keys = Array.from({ length: OBJECTS_PER_RUN }, (_, i) => `objects/o-${i}.bin`);
const signableHeaders = new Set(["content-type", "content-length"]);

const cleanup = () => emptyPrefix(client, prefix);

await runBenchmarks("@stowage/storage-s3 (on Ceph RGW)", [
  {
    // Create-only puts: one conditional PutObject each, as the raw side. (A plain put also HEADs
    // the key first, because the contract's `created` says whether it existed.)
    name: `create-only put + get of ${OBJECTS_PER_RUN} x 64 KiB, 8 at a time, vs raw PutObject (If-None-Match) + GetObject`,
    target: { kind: "speed", min: 0.8 },
    units: { count: 2 * OBJECTS_PER_RUN * OBJECT_BYTES, label: "B" },
    rounds: 7,
    prepare: cleanup,
    async ours() {
      await mapConcurrent(keys, 8, async (key) => {
        await store.put(key, body, { ifNoneMatch: "*", contentType: "application/octet-stream" });
        await store.get(key);
      });
    },
    async baseline() {
      await mapConcurrent(keys, 8, async (key) => {
        const Key = `${prefix}raw/${key}`;
        await client.send(
          new PutObjectCommand({
            Bucket: bucket,
            Key,
            Body: body,
            ContentType: "application/octet-stream",
            IfNoneMatch: "*",
          }),
        );
        const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key }));
        await got.Body!.transformToByteArray();
      });
    },
    cleanup,
  },
  {
    name: `createUploadUrl x${SIGNS_PER_RUN} (validated, binds size and type) vs raw getSignedUrl`,
    target: { kind: "speed", min: 0.8 },
    units: { count: SIGNS_PER_RUN, label: "ops" },
    rounds: 7,
    async ours() {
      for (let i = 0; i < SIGNS_PER_RUN; i++) {
        await store.createUploadUrl({
          key: `signed/shot-${i % 100}.png`,
          contentType: "image/png",
          contentLength: 1024,
          expiresInSeconds: 900,
        });
      }
    },
    async baseline() {
      for (let i = 0; i < SIGNS_PER_RUN; i++) {
        const command = new PutObjectCommand({
          Bucket: bucket,
          Key: `${prefix}store/signed/shot-${i % 100}.png`,
          ContentType: "image/png",
          ContentLength: 1024,
        });
        await getSignedUrl(client, command, { expiresIn: 900, signableHeaders });
      }
    },
  },
  ...multipartCases(client, bucket, prefix, cleanup),
]);
await cleanup();
