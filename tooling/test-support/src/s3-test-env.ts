import { type IntegrationEnv, integrationEnv } from "@stowage/core/testing";

/** What a test needs to reach the real S3 server: Ceph RGW from `tooling/rgw/start.sh` in CI. */
const S3_TEST_VARIABLES = ["S3_ENDPOINT", "S3_ACCESS_KEY_ID", "S3_SECRET_ACCESS_KEY", "S3_BUCKET"] as const;

/**
 * The gate of every test that needs the real S3 server: skipped with a printed reason outside CI
 * when the `S3_*` variables are unset, a failure in CI. `what` names the suite in the message.
 */
export function s3TestEnv(what: string): IntegrationEnv {
  return integrationEnv(`${what} (S3, Ceph RGW)`, S3_TEST_VARIABLES);
}

/**
 * The options of `createS3Client` (`@stowage/storage-s3`) for the real S3 server a ready
 * {@link s3TestEnv} names; `S3_REGION` when set, else `us-east-1`.
 */
export function s3ClientOptions(env: IntegrationEnv) {
  return {
    endpoint: env.values.S3_ENDPOINT!,
    region: process.env.S3_REGION || "us-east-1",
    accessKeyId: env.values.S3_ACCESS_KEY_ID!,
    secretAccessKey: env.values.S3_SECRET_ACCESS_KEY!,
  };
}
