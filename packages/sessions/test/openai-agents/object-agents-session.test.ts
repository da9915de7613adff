import { randomUUID } from "node:crypto";
import { createMemoryObjectStore, type ObjectStore } from "@stowage/core";
import { createFsObjectStore } from "@stowage/storage-fs";
import { createS3Client, createS3ObjectStore } from "@stowage/storage-s3";
import { s3ClientOptions, s3TestEnv, tempDirectory } from "@stowage/test-support";
import { createObjectAgentsSession } from "../../src/openai-agents/create-object-agents-session.js";
import { describeAgentsSessionConformance } from "../../src/testing/agents-session-conformance.js";

// The shared suite of @stowage/sessions/testing on the object Session over memory, fs and Ceph
// RGW; PGlite and PostgreSQL run it in @stowage/storage-postgres. One store serves a whole suite:
// every test opens sessions of its own.
const run = randomUUID();
const over = (store: ObjectStore) => (sessionId: string) => createObjectAgentsSession({ store, sessionId });

describeAgentsSessionConformance({
  name: "object Session on memory",
  openSession: over(createMemoryObjectStore()),
});

describeAgentsSessionConformance({
  name: "object Session on fs",
  openSession: over(createFsObjectStore({ root: await tempDirectory("stowage-agents-session-") })),
});

const s3 = s3TestEnv("object Session");
describeAgentsSessionConformance({
  name: "object Session on S3 (Ceph RGW)",
  ...(s3.ready ? {} : { skip: s3.reason }),
  openSession: (sessionId) =>
    createObjectAgentsSession({
      sessionId,
      store: createS3ObjectStore({
        client: createS3Client(s3ClientOptions(s3)),
        bucket: s3.values.S3_BUCKET!,
        prefix: `test/agents-session/${run}/`,
      }),
    }),
});
