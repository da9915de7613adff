import { randomUUID } from "node:crypto";
import { DeleteObjectCommand, ListObjectsV2Command, type S3Client } from "@aws-sdk/client-s3";
import { mapConcurrent } from "@stowage/core";
import type { IntegrationEnv } from "@stowage/core/testing";
import { s3TestEnv } from "@stowage/test-support";
import { createS3Client } from "../../src/s3-client.js";

/** The real S3 server of the integration tests. */
export const s3Env: IntegrationEnv = s3TestEnv("storage-s3");

/** The reason to skip, or undefined when the server is configured. */
export const s3SkipReason: string | undefined = s3Env.ready ? undefined : s3Env.reason;

export const bucket = s3Env.values.S3_BUCKET ?? "unset";

export function testClient(overrides: { endpoint?: string; secretAccessKey?: string } = {}): S3Client {
  return createS3Client({
    endpoint: overrides.endpoint ?? s3Env.values.S3_ENDPOINT ?? "http://127.0.0.1:1",
    region: process.env.S3_REGION || "us-east-1",
    accessKeyId: s3Env.values.S3_ACCESS_KEY_ID ?? "unset",
    secretAccessKey: overrides.secretAccessKey ?? s3Env.values.S3_SECRET_ACCESS_KEY ?? "unset",
  });
}

/** A prefix no other test uses: `test/<what>/<uuid>/`. */
export function uniquePrefix(what: string): string {
  return `test/${what}/${randomUUID()}/`;
}

/** Deletes every object under `prefix` (one DeleteObject each: RGW 16 wants Content-MD5 on DeleteObjects). */
export async function emptyPrefix(client: S3Client, prefix: string): Promise<void> {
  let token: string | undefined;
  do {
    const page = await client.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
    );
    const keys = (page.Contents ?? []).map((object) => object.Key!);
    await mapConcurrent(keys, 16, (key) =>
      client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key })),
    );
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
}
