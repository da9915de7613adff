import {
  contentDisposition,
  type DirectDownloadRequest,
  type DirectUploadRequest,
  type SignedRequest,
} from "@stowage/core";
import { presignGet, presignPut } from "./presign.js";
import { type S3Context, s3Key } from "./s3-context.js";

/** A presigned PUT of a store key, binding its type, length and (when given) SHA-256. */
export function uploadUrl(context: S3Context, request: DirectUploadRequest): Promise<SignedRequest> {
  return presignPut(context.client, {
    bucket: context.bucket,
    key: s3Key(context, request.key),
    contentType: request.contentType,
    contentLength: request.contentLength,
    ...(request.sha256 === undefined ? {} : { sha256: request.sha256 }),
    expiresInSeconds: request.expiresInSeconds,
  });
}

/** A presigned GET of a store key, with the `Content-Disposition` asked for. */
export function downloadUrl(
  context: S3Context,
  { key, expiresInSeconds, disposition, filename }: DirectDownloadRequest,
): Promise<SignedRequest> {
  // Without either, the object's own Content-Disposition (usually none) is served.
  const override =
    disposition === undefined && filename === undefined
      ? undefined
      : contentDisposition(disposition ?? "attachment", filename ?? key.slice(key.lastIndexOf("/") + 1));
  return presignGet(context.client, {
    bucket: context.bucket,
    key: s3Key(context, key),
    expiresInSeconds,
    ...(override === undefined ? {} : { contentDisposition: override }),
  });
}
