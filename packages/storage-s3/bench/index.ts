// Benchmarks of the artifact-upload path on a real S3 (Ceph RGW from tooling/rgw/start.sh), each
// against the raw SDK operation doing the same work, measured in the same run.
import { randomUUID } from "node:crypto";
import { DeleteObjectCommand, ListObjectsV2Command, PutObjectCommand } from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { runBenchmarks } from "@stowage/bench-kit";
import { mapConcurrent } from "@stowage/core";
import { integrationEnv } from "@stowage/core/testing";
import {
  createArtifactPolicy,
  createArtifactUploads,
  createMemoryQuotaLedger,
  createS3Client,
  createS3ObjectStore,
  type Principal,
  sessionPrefix,
  usageSourceFromStore,
} from "@stowage/storage-s3";

const SIGNS_PER_RUN = 2000;
const CHECKS_PER_RUN = 500;
const NAIVE_CHECKS_PER_RUN = 3;
const SMALL_SESSION_OBJECTS = 10;
const LARGE_SESSION_OBJECTS = 10_000;

const env = integrationEnv("storage-s3 benchmarks (S3: Ceph RGW)", [
  "S3_ENDPOINT",
  "S3_ACCESS_KEY_ID",
  "S3_SECRET_ACCESS_KEY",
  "S3_BUCKET",
]);
if (!env.ready) {
  console.log(`\nstorage-s3: ${env.reason}; run eval "$(tooling/rgw/start.sh)" first`);
  process.exit(0);
}

const bucket = env.values.S3_BUCKET!;
const client = createS3Client({
  endpoint: env.values.S3_ENDPOINT!,
  region: process.env.S3_REGION || "us-east-1",
  accessKeyId: env.values.S3_ACCESS_KEY_ID!,
  secretAccessKey: env.values.S3_SECRET_ACCESS_KEY!,
});
const prefix = `bench/${randomUUID()}/`;
const store = createS3ObjectStore({ client, bucket, prefix });
const owner: Principal = { kind: "user", id: "bench" };
const small = sessionPrefix(owner, "small");
const large = sessionPrefix(owner, "large");

async function fill(scope: string, count: number): Promise<void> {
  const keys = Array.from({ length: count }, (_, i) => `${prefix}${scope}artifacts/f-${i}.log`);
  await mapConcurrent(keys, 32, (key) =>
    client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: "x" })),
  );
}

async function emptyBenchPrefix(): Promise<void> {
  let token: string | undefined;
  do {
    const page = await client.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
    );
    const keys = (page.Contents ?? []).map((object) => object.Key!);
    await mapConcurrent(keys, 32, (key) =>
      client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key })),
    );
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
}

/** The naive check of the seed: list the whole session prefix on every request and sum the sizes. */
async function listAndSum(scope: string): Promise<number> {
  let total = 0;
  let token: string | undefined;
  do {
    const page = await client.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: `${prefix}${scope}`, ContinuationToken: token }),
    );
    for (const object of page.Contents ?? []) total += object.Size ?? 0;
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return total;
}

console.error(
  `storage-s3 bench: writing ${LARGE_SESSION_OBJECTS + SMALL_SESSION_OBJECTS} objects under ${prefix}`,
);
await fill(small, SMALL_SESSION_OBJECTS);
await fill(large, LARGE_SESSION_OBJECTS);

const source = usageSourceFromStore(store);
const ledger = createMemoryQuotaLedger();
const reserve = (scope: string, i: number) =>
  ledger.reserve({
    scope,
    key: `${scope}artifacts/new-${i % 20}.png`,
    bytes: 1,
    limitBytes: 1024 ** 4,
    urlExpiresAt: new Date(Date.now() + 900_000),
    source,
  });

// Cold: the first check of a session lists its prefix, one page per 1,000 keys.
const timed = async (work: () => Promise<unknown>) => {
  const start = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - start) / 1e6;
};
const coldSmall = await timed(() => reserve(small, 0));
const coldLarge = await timed(() => reserve(large, 0));
console.log(
  `\nquota, first check of a session (lists the prefix once, then again every 5 min): ` +
    `${SMALL_SESSION_OBJECTS} objects ${coldSmall.toFixed(1)} ms, ${LARGE_SESSION_OBJECTS.toLocaleString("en-US")} objects ${coldLarge.toFixed(1)} ms ` +
    `(linear in objects: one LIST page per 1,000 keys)`,
);

const uploads = createArtifactUploads({
  store,
  policy: createArtifactPolicy(),
  auth: { authenticate: () => null, sessionOwner: () => owner },
});
const signableHeaders = new Set(["content-type", "content-length"]);

await runBenchmarks("@stowage/storage-s3 (Ceph RGW)", [
  {
    name: `requestUpload x${SIGNS_PER_RUN} (policy, owner, warm quota, presign) vs raw getSignedUrl`,
    target: { kind: "speed", min: 0.8 },
    units: { count: SIGNS_PER_RUN, label: "ops" },
    rounds: 7,
    async ours() {
      for (let i = 0; i < SIGNS_PER_RUN; i++) {
        await uploads.requestUpload({
          principal: owner,
          sessionId: "small",
          filename: `shot-${i % 100}.png`,
          contentType: "image/png",
          fileSize: 1024,
        });
      }
    },
    async baseline() {
      for (let i = 0; i < SIGNS_PER_RUN; i++) {
        const command = new PutObjectCommand({
          Bucket: bucket,
          Key: `${prefix}${small}artifacts/shot-${i % 100}.png`,
          ContentType: "image/png",
          ContentLength: 1024,
        });
        await getSignedUrl(client, command, { expiresIn: 900, signableHeaders });
      }
    },
  },
  {
    name: `quota check x${CHECKS_PER_RUN}: ${LARGE_SESSION_OBJECTS.toLocaleString("en-US")} objects in the session vs ${SMALL_SESSION_OBJECTS}`,
    target: { kind: "time", max: 1.5 },
    units: { count: CHECKS_PER_RUN, label: "ops" },
    rounds: 7,
    async ours() {
      for (let i = 0; i < CHECKS_PER_RUN; i++) await reserve(large, i);
    },
    async baseline() {
      for (let i = 0; i < CHECKS_PER_RUN; i++) await reserve(small, i);
    },
  },
  {
    name: `quota check x${NAIVE_CHECKS_PER_RUN}, ${LARGE_SESSION_OBJECTS.toLocaleString("en-US")} objects: ledger vs listing the prefix per request`,
    target: { kind: "speed", min: 1 },
    units: { count: NAIVE_CHECKS_PER_RUN, label: "ops" },
    rounds: 5,
    async ours() {
      for (let i = 0; i < NAIVE_CHECKS_PER_RUN; i++) await reserve(large, i);
    },
    async baseline() {
      for (let i = 0; i < NAIVE_CHECKS_PER_RUN; i++) await listAndSum(large);
    },
    cleanup: emptyBenchPrefix,
  },
]);
