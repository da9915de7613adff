import { S3Client } from "@aws-sdk/client-s3";
import { describeValue, StowageError } from "@stowage/core";

/** Region used when none is given; S3-compatible servers (RGW, MinIO, R2 with `auto`) accept it. */
const DEFAULT_S3_REGION = "us-east-1";

/** Options of {@link createS3Client}. */
export interface S3ClientOptions {
  /** A custom endpoint (`http://127.0.0.1:7480`, `https://<account>.r2.cloudflarestorage.com`); omit for AWS. */
  endpoint?: string | undefined;
  /** Default `us-east-1` (S3-compatible servers accept it; R2 also takes `auto`). */
  region?: string;
  /**
   * Static credentials; omit both to use the SDK's default provider chain (env, profile, IAM role).
   * `undefined` counts as omitted, so `process.env.S3_ACCESS_KEY_ID` can be passed as it is.
   */
  accessKeyId?: string | undefined;
  secretAccessKey?: string | undefined;
  sessionToken?: string | undefined;
  /** `bucket` in the path instead of the host name. Default: true with a custom endpoint, else false. */
  forcePathStyle?: boolean;
}

function assertOptionalString(name: string, value: unknown): void {
  if (value !== undefined && (typeof value !== "string" || value.length === 0)) {
    throw new StowageError(
      "INVALID_INPUT",
      `createS3Client: ${name} must be a non-empty string, got ${describeValue(value)}`,
    );
  }
}

/**
 * An S3 client that works with AWS S3 and S3-compatible servers alike. Checksums are computed and
 * validated only when an operation requires them (`WHEN_REQUIRED`): since SDK 3.729 the default
 * adds CRC32 checksums that several S3-compatible servers reject, and that a presigned PUT would
 * otherwise bind to the checksum of an empty body.
 */
export function createS3Client(options: S3ClientOptions = {}): S3Client {
  const { endpoint, region = DEFAULT_S3_REGION, accessKeyId, secretAccessKey, sessionToken } = options;
  for (const [name, value] of Object.entries({
    endpoint,
    region,
    accessKeyId,
    secretAccessKey,
    sessionToken,
  })) {
    assertOptionalString(name, value);
  }
  if (endpoint !== undefined) {
    let url: URL | undefined;
    try {
      url = new URL(endpoint);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
      throw new StowageError(
        "INVALID_INPUT",
        `createS3Client: endpoint must be an http(s) URL such as "http://127.0.0.1:7480", got ${describeValue(endpoint)}`,
      );
    }
  }
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw new StowageError(
      "INVALID_INPUT",
      "createS3Client: give both accessKeyId and secretAccessKey, or neither (to use the default credential chain)",
    );
  }
  if (options.forcePathStyle !== undefined && typeof options.forcePathStyle !== "boolean") {
    throw new StowageError(
      "INVALID_INPUT",
      `createS3Client: forcePathStyle must be a boolean, got ${describeValue(options.forcePathStyle)}`,
    );
  }
  return new S3Client({
    region,
    ...(endpoint === undefined ? {} : { endpoint }),
    forcePathStyle: options.forcePathStyle ?? endpoint !== undefined,
    ...(accessKeyId === undefined || secretAccessKey === undefined
      ? {}
      : {
          credentials: {
            accessKeyId,
            secretAccessKey,
            ...(sessionToken === undefined ? {} : { sessionToken }),
          },
        }),
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
}
