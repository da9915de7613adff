import { ListObjectsV2Command, PutObjectCommand } from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import type { BenchCase } from "@stowage/bench-kit";
import type { Principal } from "@stowage/core";
import { mapConcurrent } from "@stowage/core";
import { createMemoryQuotaLedger, createUploadService, usageSourceFromStore } from "@stowage/uploads";
import { sessionPrefix, uploadKey, uploadsPrefix } from "../src/upload-keys.js";
import { emptyStore, rgw, rgwStore } from "../test/support/rgw.js";

export { rgw };

const SIGNS_PER_RUN = 2000;
const CONCURRENT_REQUESTS = 20;
const CONCURRENT_BATCHES_PER_RUN = 25;
// Enough checks for a run of tens of milliseconds: at 500 (about 2 ms) timer noise decided the ratio.
const CHECKS_PER_RUN = 5000;
const NAIVE_CHECKS_PER_RUN = 3;
const SMALL_SESSION_OBJECTS = 10;
const LARGE_SESSION_OBJECTS = 10_000;
/** About the size of the record the service keeps per URL where the store does not verify. */
const RECORD_BYTES = 140;

/**
 * Fills two sessions on RGW and returns the S3 cases: signing (a store that checks checksums as
 * AWS S3 does, and RGW 16 as it is, where each URL gets a record), 20 concurrent upload-URL
 * requests, and the quota check at 10,000 objects against 10 and against listing per request.
 */
export async function rgwCases(): Promise<BenchCase[]> {
  // As AWS S3: the store refuses bytes that miss the bound checksum, so no records are kept.
  const store = rgwStore("bench", { verifiesUploadChecksums: true });
  // RGW 16 as it is: every URL gets a record of what it bound (one small PUT).
  const recordingStore = rgwStore("bench-records");
  const { client, bucket, prefix } = store;
  const owner: Principal = { kind: "user", id: "bench" };
  const small = sessionPrefix(owner, "small");
  const large = sessionPrefix(owner, "large");

  /** Writes `count` one-byte objects into a session's uploads with raw PutObjects, 32 at a time. */
  const fill = async (sessionId: string, count: number) => {
    const folder = uploadsPrefix(owner, sessionId);
    const keys = Array.from({ length: count }, (_, i) => store.s3KeyFor(`${folder}f-${i}.log`));
    await mapConcurrent(keys, 32, (key) =>
      client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: "x" })),
    );
  };

  /** The naive check of the seed: list the whole session prefix on every request and sum the sizes. */
  const listAndSum = async (scope: string) => {
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
  };

  console.error(
    `uploads bench: writing ${LARGE_SESSION_OBJECTS + SMALL_SESSION_OBJECTS} objects under ${prefix}`,
  );
  await fill("small", SMALL_SESSION_OBJECTS);
  await fill("large", LARGE_SESSION_OBJECTS);

  const source = usageSourceFromStore(store);
  const ledger = createMemoryQuotaLedger();
  const reserve = (scope: string, i: number) =>
    ledger.reserve({
      scope,
      key: `${scope}new-${i % 20}.png`,
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
    `\nquota, first check of a session (lists the prefix once; afterwards only listings reconcile it): ` +
      `${SMALL_SESSION_OBJECTS} objects ${coldSmall.toFixed(1)} ms, ${LARGE_SESSION_OBJECTS.toLocaleString("en-US")} objects ${coldLarge.toFixed(1)} ms ` +
      `(linear in objects: one LIST page per 1,000 keys)`,
  );

  const sessionExists = () => true;
  const uploads = createUploadService({ store, sessionExists });
  const recordingUploads = createUploadService({ store: recordingStore, sessionExists });
  const signableHeaders = new Set(["content-type", "content-length"]);
  const rawSign = (i: number) =>
    getSignedUrl(
      client,
      new PutObjectCommand({
        Bucket: bucket,
        Key: store.s3KeyFor(uploadKey(owner, "small", `shot-${i % 100}.png`)),
        ContentType: "image/png",
        ContentLength: 1024,
      }),
      { expiresIn: 900, signableHeaders },
    );
  const request = (service: typeof uploads, i: number) =>
    service.requestUpload({
      principal: owner,
      sessionId: "small",
      filename: `shot-${i % 100}.png`,
      contentType: "image/png",
      fileSize: 1024,
    });

  return [
    {
      name: `requestUpload x${SIGNS_PER_RUN} (policy, session, warm quota, presign) vs raw getSignedUrl, store that checks checksums (AWS S3)`,
      target: { kind: "speed", min: 0.8 },
      units: { count: SIGNS_PER_RUN, label: "ops" },
      rounds: 7,
      async ours() {
        for (let i = 0; i < SIGNS_PER_RUN; i++) await request(uploads, i);
      },
      async baseline() {
        for (let i = 0; i < SIGNS_PER_RUN; i++) await rawSign(i);
      },
    },
    {
      name: `${CONCURRENT_REQUESTS} concurrent upload-URL requests x${CONCURRENT_BATCHES_PER_RUN} on RGW 16 (each URL's record written) vs raw getSignedUrl + PutObject of a record`,
      target: { kind: "speed", min: 0.8 },
      units: { count: CONCURRENT_REQUESTS * CONCURRENT_BATCHES_PER_RUN, label: "ops" },
      rounds: 5,
      async ours() {
        for (let batch = 0; batch < CONCURRENT_BATCHES_PER_RUN; batch++) {
          await Promise.all(
            Array.from({ length: CONCURRENT_REQUESTS }, (_, i) => request(recordingUploads, i)),
          );
        }
      },
      async baseline() {
        for (let batch = 0; batch < CONCURRENT_BATCHES_PER_RUN; batch++) {
          await Promise.all(
            Array.from({ length: CONCURRENT_REQUESTS }, async (_, i) => {
              await rawSign(i);
              await client.send(
                new PutObjectCommand({
                  Bucket: bucket,
                  Key: `${prefix}records/${batch}-${i}.json`,
                  Body: "x".repeat(RECORD_BYTES),
                  ContentType: "application/json",
                }),
              );
            }),
          );
        }
      },
      cleanup: () => emptyStore(recordingStore),
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
      cleanup: () => emptyStore(store),
    },
  ];
}
