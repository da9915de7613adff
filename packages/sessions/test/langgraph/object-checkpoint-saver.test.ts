import { randomUUID } from "node:crypto";
import { createMemoryObjectStore, type ObjectStore } from "@stowage/core";
import { createFsObjectStore } from "@stowage/storage-fs";
import { createS3Client, createS3ObjectStore } from "@stowage/storage-s3";
import { s3ClientOptions, s3TestEnv, tempDirectory } from "@stowage/test-support";
import * as vitest from "vitest";
import { createObjectCheckpointSaver } from "../../src/langgraph/create-object-checkpoint-saver.js";
import type { StowageCheckpointSaver } from "../../src/langgraph/index.js";

// LangGraph's published suite declares its tests with vitest's globals.
Object.assign(globalThis, vitest);
const { validate } = await import("@langchain/langgraph-checkpoint-validation");

validate({
  checkpointerName: "@stowage/sessions/langgraph on memory",
  createCheckpointer: () => createObjectCheckpointSaver({ store: createMemoryObjectStore() }),
});

validate({
  checkpointerName: "@stowage/sessions/langgraph on fs",
  createCheckpointer: async () =>
    createObjectCheckpointSaver({
      store: createFsObjectStore({ root: await tempDirectory("stowage-langgraph-") }),
    }),
});

const s3 = s3TestEnv("LangGraph checkpoint saver");
if (s3.ready) {
  const objects = new WeakMap<StowageCheckpointSaver, ObjectStore>();
  validate({
    checkpointerName: "@stowage/sessions/langgraph on S3 (Ceph RGW)",
    createCheckpointer: () => {
      const store = createS3ObjectStore({
        client: createS3Client(s3ClientOptions(s3)),
        bucket: s3.values.S3_BUCKET!,
        prefix: `test/langgraph/${randomUUID()}/`,
      });
      const saver = createObjectCheckpointSaver({ store });
      objects.set(saver, store);
      return saver;
    },
    // RGW keeps every object in memory: each saver empties its own prefix.
    destroyCheckpointer: async (saver) => {
      const store = objects.get(saver)!;
      for await (const item of store.iterate()) await store.delete(item.key);
    },
  });
} else {
  vitest.describe.skip(`LangGraph validation on S3 (${s3.reason})`, () => {
    vitest.it("runs with the S3_* settings", () => {});
  });
}
