import { randomUUID } from "node:crypto";
import { mapConcurrent, type ObjectStore } from "@stowage/core";
import type { IntegrationEnv } from "@stowage/core/testing";
import { createS3Client, createS3ObjectStore, type S3ObjectStore } from "@stowage/storage-s3";
import { s3TestEnv } from "@stowage/test-support";

/** The real S3 server of the integration tests. */
export const rgw: IntegrationEnv = s3TestEnv("uploads");

/** The reason to skip, or undefined when the server is configured. */
export const rgwSkipReason: string | undefined = rgw.ready ? undefined : rgw.reason;

/**
 * An S3 store on RGW under `test/<what>/<uuid>/`, a prefix no other test uses. It declares what
 * RGW 16 does: presigned uploads are not checked against their SHA-256
 * (`verifiesUploadChecksums: false`), unless `verifiesUploadChecksums` says to act as AWS S3.
 */
export function rgwStore(what: string, options: { verifiesUploadChecksums?: boolean } = {}): S3ObjectStore {
  const client = createS3Client({
    endpoint: rgw.values.S3_ENDPOINT ?? "http://127.0.0.1:1",
    region: process.env.S3_REGION || "us-east-1",
    accessKeyId: rgw.values.S3_ACCESS_KEY_ID ?? "unset",
    secretAccessKey: rgw.values.S3_SECRET_ACCESS_KEY ?? "unset",
  });
  return createS3ObjectStore({
    client,
    bucket: rgw.values.S3_BUCKET ?? "unset",
    prefix: `test/${what}/${randomUUID()}/`,
    verifiesUploadChecksums: options.verifiesUploadChecksums ?? false,
  });
}

/** Deletes every object of `store`. */
export async function emptyStore(store: ObjectStore): Promise<void> {
  const keys: string[] = [];
  for await (const item of store.iterate()) keys.push(item.key);
  await mapConcurrent(keys, 16, (key) => store.delete(key));
}
