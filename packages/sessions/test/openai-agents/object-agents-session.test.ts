import { randomUUID } from "node:crypto";
import { createMemoryObjectStore } from "@stowage/core";
import { createFsObjectStore } from "@stowage/storage-fs";
import { createS3Client, createS3ObjectStore } from "@stowage/storage-s3";
import { s3TestEnv, tempDirectory } from "@stowage/test-support";
import { describe, it } from "vitest";
import { describeAgentsSessionBehaviour } from "../support/agents-session-behaviour.js";

describeAgentsSessionBehaviour("memory", async () => createMemoryObjectStore());

describeAgentsSessionBehaviour("fs", async () =>
  createFsObjectStore({ root: await tempDirectory("stowage-agents-session-") }),
);

const s3 = s3TestEnv("OpenAI Agents Session");
if (s3.ready) {
  describeAgentsSessionBehaviour("S3 (Ceph RGW)", async () =>
    createS3ObjectStore({
      client: createS3Client({
        endpoint: s3.values.S3_ENDPOINT!,
        region: process.env.S3_REGION || "us-east-1",
        accessKeyId: s3.values.S3_ACCESS_KEY_ID!,
        secretAccessKey: s3.values.S3_SECRET_ACCESS_KEY!,
      }),
      bucket: s3.values.S3_BUCKET!,
      prefix: `test/agents-session/${randomUUID()}/`,
    }),
  );
} else {
  describe.skip(`OpenAI Agents Session on S3 (${s3.reason})`, () => {
    it("runs with the S3_* settings", () => {});
  });
}
