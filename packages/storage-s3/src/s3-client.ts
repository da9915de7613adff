import { S3Client } from "@aws-sdk/client-s3";
import { describeValue, StowageError } from "@stowage/core";

/** Region used when none is given; S3-compatible servers (RGW, MinIO, R2 with `auto`) accept it. */
export const DEFAULT_S3_REGION = "us-east-1";

export interface S3ClientOptions {
  /** A custom endpoint (`http://127.0.0.1:7480`, `https://<account>.r2.cloudflarestorage.com`); omit for AWS. */
  endpoint?: string;
  /** Default {@link DEFAULT_S3_REGION}. */
  region?: string;
  /** Static credentials; omit both to use the SDK's default provider chain (env, profile, IAM role). */
  accessKeyId?: string;
  secretAccessKey?: string;
  sessionToken?: string;
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

/**
 * Client options from the environment: `S3_ENDPOINT`, `S3_REGION`, `S3_ACCESS_KEY_ID`,
 * `S3_SECRET_ACCESS_KEY`, `S3_SESSION_TOKEN` and `S3_FORCE_PATH_STYLE` (`true`/`false`).
 * Empty variables count as unset.
 */
export function s3ClientOptionsFromEnv(
  env: Record<string, string | undefined> = process.env,
): S3ClientOptions {
  const read = (name: string) => (env[name] === "" ? undefined : env[name]);
  const pathStyle = read("S3_FORCE_PATH_STYLE");
  if (pathStyle !== undefined && pathStyle !== "true" && pathStyle !== "false") {
    throw new StowageError(
      "INVALID_INPUT",
      `S3_FORCE_PATH_STYLE must be "true" or "false", got ${describeValue(pathStyle)}`,
    );
  }
  const options: S3ClientOptions = {};
  const endpoint = read("S3_ENDPOINT");
  const region = read("S3_REGION");
  const accessKeyId = read("S3_ACCESS_KEY_ID");
  const secretAccessKey = read("S3_SECRET_ACCESS_KEY");
  const sessionToken = read("S3_SESSION_TOKEN");
  if (endpoint !== undefined) options.endpoint = endpoint;
  if (region !== undefined) options.region = region;
  if (accessKeyId !== undefined) options.accessKeyId = accessKeyId;
  if (secretAccessKey !== undefined) options.secretAccessKey = secretAccessKey;
  if (sessionToken !== undefined) options.sessionToken = sessionToken;
  if (pathStyle !== undefined) options.forcePathStyle = pathStyle === "true";
  return options;
}
