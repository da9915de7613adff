import { type Env, envFlag, envString, envUrl, StowageError } from "@stowage/core";
// A type-only import: this file is the `./env` entry, which must never load the AWS SDK, so that
// an app can read its settings before it knows whether it needs S3 at all.
import { bucketNameProblem } from "./bucket-name.js";
import type { S3ClientOptions } from "./s3-client.js";

/** What {@link s3OptionsFromEnv} reads: the client's options, the bucket and what the server checks. */
export interface S3EnvOptions {
  client: S3ClientOptions;
  bucket: string;
  /**
   * `S3_VERIFIES_UPLOAD_CHECKSUMS`: whether the server refuses a presigned upload whose body does
   * not match its signed checksum (the store option `verifiesUploadChecksums`); unset keeps the
   * store's default (false: uploads are verified by hashing them). Set `true` only for AWS S3;
   * Ceph RGW 16 stores bodies that miss the checksum.
   */
  verifiesUploadChecksums?: boolean;
}

function invalidSetting(message: string, setting: string): StowageError {
  return new StowageError("INVALID_INPUT", message, { reason: "INVALID_SETTING", details: { setting } });
}

/**
 * S3 settings from the environment: `S3_ENDPOINT` (an http(s) URL; omit for AWS), `S3_REGION`,
 * `S3_ACCESS_KEY_ID` with `S3_SECRET_ACCESS_KEY` (both or neither: neither uses the SDK's default
 * credential chain), `S3_SESSION_TOKEN`, `S3_FORCE_PATH_STYLE` (a flag), `S3_BUCKET` and
 * `S3_VERIFIES_UPLOAD_CHECKSUMS` (a flag, see {@link S3EnvOptions}). Blank
 * variables count as unset. Undefined when S3 is not configured (neither `S3_BUCKET` nor
 * `S3_ENDPOINT`); INVALID_INPUT (`INVALID_SETTING`, `details.setting` naming the variable) when it
 * is half configured or a value is malformed, with the same checks `createS3Client` and
 * `createS3ObjectStore` make, so that what this accepts they accept.
 */
export function s3OptionsFromEnv(env: Env): S3EnvOptions | undefined {
  const endpoint = envUrl(env, "S3_ENDPOINT");
  const bucket = envString(env, "S3_BUCKET");
  if (bucket === undefined && endpoint === undefined) return undefined;
  if (bucket === undefined) {
    throw invalidSetting("S3_ENDPOINT is set but S3_BUCKET is not; set both, or neither", "S3_BUCKET");
  }
  // The store's own check, here: a bucket the settings accept is never refused at start-up.
  const bucketProblem = bucketNameProblem(bucket);
  if (bucketProblem) throw invalidSetting(`S3_BUCKET ${bucketProblem}`, "S3_BUCKET");
  const accessKeyId = envString(env, "S3_ACCESS_KEY_ID");
  const secretAccessKey = envString(env, "S3_SECRET_ACCESS_KEY");
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw invalidSetting(
      "set both S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY, or neither (to use the default credential chain)",
      accessKeyId === undefined ? "S3_ACCESS_KEY_ID" : "S3_SECRET_ACCESS_KEY",
    );
  }
  const settings = {
    endpoint,
    region: envString(env, "S3_REGION"),
    accessKeyId,
    secretAccessKey,
    sessionToken: envString(env, "S3_SESSION_TOKEN"),
    forcePathStyle: envFlag(env, "S3_FORCE_PATH_STYLE"),
  };
  const client = Object.fromEntries(
    Object.entries(settings).filter(([, value]) => value !== undefined),
  ) as S3ClientOptions;
  const verifiesUploadChecksums = envFlag(env, "S3_VERIFIES_UPLOAD_CHECKSUMS");
  return { client, bucket, ...(verifiesUploadChecksums === undefined ? {} : { verifiesUploadChecksums }) };
}
