import { GetObjectCommand, PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import type { SignedRequest } from "@stowage/core";

/** What {@link presignPut} signs. */
export interface PresignPutInput {
  bucket: string;
  /** The full S3 key (store prefix included). */
  key: string;
  contentType: string;
  /** Exact size; the signature binds it, so a longer or shorter body is refused by the server. */
  contentLength: number;
  /** Hex SHA-256; when given, the uploader must send it as `x-amz-checksum-sha256`. */
  sha256?: string;
  expiresInSeconds: number;
  /** Signing time; default now. */
  now?: Date;
}

/** What {@link presignGet} signs. */
export interface PresignGetInput {
  bucket: string;
  key: string;
  expiresInSeconds: number;
  /** A `Content-Disposition` for the server to send instead of the object's own. */
  contentDisposition?: string;
  now?: Date;
}

// Headers that go into the signature instead of the query string, so that the server refuses
// an upload whose size, type or checksum differs from what was validated.
const SIGNED_UPLOAD_HEADERS = new Set(["content-type", "content-length"]);
const UNHOISTED_UPLOAD_HEADERS = new Set(["x-amz-checksum-sha256"]);

/** Presign a PUT that binds content-type, content-length and (when given) the SHA-256 checksum. */
export async function presignPut(client: S3Client, input: PresignPutInput): Promise<SignedRequest> {
  const now = input.now ?? new Date();
  const checksum =
    input.sha256 === undefined ? undefined : Buffer.from(input.sha256, "hex").toString("base64");
  const command = new PutObjectCommand({
    Bucket: input.bucket,
    Key: input.key,
    ContentType: input.contentType,
    ContentLength: input.contentLength,
    ...(checksum === undefined ? {} : { ChecksumSHA256: checksum }),
  });
  const url = await getSignedUrl(client, command, {
    expiresIn: input.expiresInSeconds,
    signingDate: now,
    signableHeaders: SIGNED_UPLOAD_HEADERS,
    unhoistableHeaders: UNHOISTED_UPLOAD_HEADERS,
  });
  const headers: Record<string, string> = {
    "content-type": input.contentType,
    "content-length": String(input.contentLength),
  };
  if (checksum !== undefined) headers["x-amz-checksum-sha256"] = checksum;
  return {
    method: "PUT",
    url,
    headers,
    expiresAt: new Date(now.getTime() + input.expiresInSeconds * 1000),
  };
}

/** Presign a GET of one object. */
export async function presignGet(client: S3Client, input: PresignGetInput): Promise<SignedRequest> {
  const now = input.now ?? new Date();
  const command = new GetObjectCommand({
    Bucket: input.bucket,
    Key: input.key,
    ...(input.contentDisposition === undefined
      ? {}
      : { ResponseContentDisposition: input.contentDisposition }),
  });
  const url = await getSignedUrl(client, command, { expiresIn: input.expiresInSeconds, signingDate: now });
  return {
    method: "GET",
    url,
    headers: {},
    expiresAt: new Date(now.getTime() + input.expiresInSeconds * 1000),
  };
}
