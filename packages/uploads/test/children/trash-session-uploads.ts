// Child process: one upload service over a shared store (`fs:<root>`, or `s3:<prefix>` on the
// bucket the S3_* variables name) that deletes alice's session's uploads into the trash, by `by`.
// Prints "ready", waits for `goFile` (so that two of these delete at once), deletes, and prints
// what it took as JSON. With `crash`, it is killed (SIGKILL) the moment the mark's put has landed.
import { access } from "node:fs/promises";
import type { ObjectStore, PutOptions } from "@stowage/core";
import { createFsObjectStore } from "@stowage/storage-fs";
import { createUploadService } from "../../src/index.js";

const [where, sessionId, by, goFile, crash] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string | undefined,
];

async function sharedStore(): Promise<ObjectStore> {
  if (where.startsWith("fs:")) {
    return createFsObjectStore({
      root: where.slice("fs:".length),
      directUrls: { baseUrl: "http://127.0.0.1:9/direct", secret: "a test secret of at least 32 bytes!" },
    });
  }
  // Loaded only here: the AWS SDK costs an fs child seconds of start-up.
  const { createS3Client, createS3ObjectStore } = await import("@stowage/storage-s3");
  const env = process.env;
  return createS3ObjectStore({
    client: createS3Client({
      endpoint: env.S3_ENDPOINT!,
      region: env.S3_REGION || "us-east-1",
      accessKeyId: env.S3_ACCESS_KEY_ID!,
      secretAccessKey: env.S3_SECRET_ACCESS_KEY!,
    }),
    bucket: env.S3_BUCKET!,
    prefix: where.slice("s3:".length),
    verifiesUploadChecksums: false,
  });
}

const inner = await sharedStore();
const store: ObjectStore =
  crash === "crash"
    ? {
        ...inner,
        async put(key: string, body: Parameters<ObjectStore["put"]>[1], options?: PutOptions) {
          const result = await inner.put(key, body, options);
          if (key.startsWith("upload-trash/")) process.kill(process.pid, "SIGKILL");
          return result;
        },
      }
    : inner;
const uploads = createUploadService({
  store,
  sessionExists: (principal, id) => principal.id === "alice" && id === sessionId,
});

console.log("ready");
for (;;) {
  if (
    await access(goFile).then(
      () => true,
      () => false,
    )
  )
    break;
  await new Promise((resolve) => setTimeout(resolve, 2));
}
const took = await uploads.trashSessionUploads({ kind: "user", id: "alice" }, sessionId, { by });
console.log(JSON.stringify({ ...took, trashedAt: took.trashedAt.toISOString() }));
