// Child process: streams an endless body into the S3 store until it is killed.
// argv: <store prefix> <key>
import { createS3Client } from "../../src/s3-client.js";
import { createS3ObjectStore } from "../../src/s3-object-store.js";
import { MIN_PART_SIZE_BYTES } from "../../src/s3-options.js";

const [prefix, key] = process.argv.slice(2) as [string, string];
const client = createS3Client({
  endpoint: process.env.S3_ENDPOINT!,
  region: process.env.S3_REGION || "us-east-1",
  accessKeyId: process.env.S3_ACCESS_KEY_ID!,
  secretAccessKey: process.env.S3_SECRET_ACCESS_KEY!,
});
const store = createS3ObjectStore({
  client,
  bucket: process.env.S3_BUCKET!,
  prefix,
  partSizeBytes: MIN_PART_SIZE_BYTES,
});
const chunk = new Uint8Array(256 * 1024).fill(7);
const endless = new ReadableStream<Uint8Array>({
  pull(controller) {
    controller.enqueue(chunk);
  },
});
await store.put(key, endless);
console.error("the endless put finished, which it must not");
process.exit(1);
