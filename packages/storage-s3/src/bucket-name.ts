import { describeValue } from "@stowage/core";

/** Longest bucket name accepted (S3-compatible servers allow longer names than AWS's 63). */
const MAX_BUCKET_NAME_LENGTH = 255;

/**
 * Why `value` cannot be a bucket name, or undefined when it can be one: a non-empty string of at
 * most 255 characters without a slash or whitespace. The one check of a bucket name, shared by
 * `createS3ObjectStore` and `s3OptionsFromEnv` (which must not load the AWS SDK), so that a value
 * the settings accept is never refused by the store.
 */
export function bucketNameProblem(value: unknown): string | undefined {
  if (
    typeof value !== "string" ||
    value.length === 0 ||
    value.length > MAX_BUCKET_NAME_LENGTH ||
    /[/\s]/.test(value)
  ) {
    return `must be a bucket name (1 to ${MAX_BUCKET_NAME_LENGTH} characters, no slash or whitespace), got ${describeValue(value)}`;
  }
  return undefined;
}
