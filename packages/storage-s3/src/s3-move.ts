import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  type HeadObjectCommandOutput,
} from "@aws-sdk/client-s3";
import { describeValue, type PutResult, StowageError } from "@stowage/core";
import { alreadyExists, copySource, headObject, type S3Context, s3Key } from "./s3-context.js";
import { isS3NotFound, isS3PreconditionFailed } from "./s3-errors.js";
import { MAX_SINGLE_PUT_BYTES } from "./s3-options.js";
import { putCreateOnly } from "./s3-put.js";

async function copy(
  context: S3Context,
  from: string,
  to: string,
  source: HeadObjectCommandOutput,
  signal: AbortSignal | undefined,
): Promise<void> {
  if ((source.ContentLength ?? 0) > MAX_SINGLE_PUT_BYTES) {
    throw new StowageError(
      "TOO_LARGE",
      `${context.name}: ${describeValue(from)} is larger than ${MAX_SINGLE_PUT_BYTES} bytes, the most one CopyObject can copy`,
      { details: { limit: MAX_SINGLE_PUT_BYTES } },
    );
  }
  await context.client.send(
    new CopyObjectCommand({
      Bucket: context.bucket,
      Key: s3Key(context, to),
      CopySource: copySource(context, from),
      ...(source.ETag ? { CopySourceIfMatch: source.ETag } : {}),
      MetadataDirective: "COPY",
    }),
    { abortSignal: signal },
  );
}

/**
 * Create-only move: RGW 16 ignores `If-None-Match` on CopyObject, so the bytes are streamed
 * (never buffered) from a GET into a conditional PUT, which is atomic.
 */
async function copyCreateOnly(
  context: S3Context,
  from: string,
  to: string,
  source: HeadObjectCommandOutput,
  signal: AbortSignal | undefined,
): Promise<void> {
  const object = await context.client.send(
    new GetObjectCommand({
      Bucket: context.bucket,
      Key: s3Key(context, from),
      ...(source.ETag ? { IfMatch: source.ETag } : {}),
    }),
    { abortSignal: signal },
  );
  const input = {
    ContentLength: object.ContentLength ?? 0,
    ...(object.ContentType ? { ContentType: object.ContentType } : {}),
    ...(object.Metadata ? { Metadata: object.Metadata } : {}),
  };
  let used = false;
  try {
    await putCreateOnly(
      context,
      to,
      input,
      () => {
        if (used) throw new StowageError("CONFLICT", `${context.name} move: retry of a streamed copy`);
        used = true;
        return object.Body;
      },
      signal,
    );
  } catch (err) {
    (object.Body as { destroy?: () => void } | undefined)?.destroy?.();
    if (StowageError.is(err, "ALREADY_EXISTS")) throw alreadyExists(context, "move", to, err);
    throw err;
  }
}

/** CopyObject + DeleteObject; create-only streams the bytes through a conditional PUT instead. */
export async function moveObject(
  context: S3Context,
  from: string,
  to: string,
  createOnly: boolean,
  signal: AbortSignal | undefined,
): Promise<PutResult> {
  const source = await headObject(context, from, signal);
  if (!source)
    throw new StowageError("NOT_FOUND", `${context.name} move: ${describeValue(from)} does not exist`);
  let created = true;
  if (createOnly && context.conditionalWrites) {
    // The HEAD spares streaming the bytes in the common case; the conditional PUT decides races.
    if ((await headObject(context, to, signal)) !== null) throw alreadyExists(context, "move", to);
    await copyCreateOnly(context, from, to, source, signal);
  } else {
    created = (await headObject(context, to, signal)) === null;
    if (createOnly && !created) throw alreadyExists(context, "move", to);
    await copy(context, from, to, source, signal);
  }
  await context.client.send(new DeleteObjectCommand({ Bucket: context.bucket, Key: s3Key(context, from) }), {
    abortSignal: signal,
  });
  return { key: to, size: source.ContentLength ?? 0, created };
}

/** Gives an object a new Last-Modified; false when it does not exist. */
export async function touchObject(
  context: S3Context,
  key: string,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  const source = await headObject(context, key, signal);
  if (!source) return false;
  try {
    // A copy onto itself is allowed only when something changes: REPLACE the metadata
    // with the same values, which gives the object a new Last-Modified.
    await context.client.send(
      new CopyObjectCommand({
        Bucket: context.bucket,
        Key: s3Key(context, key),
        CopySource: copySource(context, key),
        ...(source.ETag ? { CopySourceIfMatch: source.ETag } : {}),
        MetadataDirective: "REPLACE",
        ...(source.ContentType ? { ContentType: source.ContentType } : {}),
        ...(source.Metadata ? { Metadata: source.Metadata } : {}),
        ...(source.CacheControl ? { CacheControl: source.CacheControl } : {}),
        ...(source.ContentDisposition ? { ContentDisposition: source.ContentDisposition } : {}),
        ...(source.ContentEncoding ? { ContentEncoding: source.ContentEncoding } : {}),
        ...(source.ContentLanguage ? { ContentLanguage: source.ContentLanguage } : {}),
      }),
      { abortSignal: signal },
    );
    return true;
  } catch (err) {
    if (isS3NotFound(err)) return false;
    // Rewritten by someone else since the HEAD: it has a fresh Last-Modified anyway.
    if (isS3PreconditionFailed(err)) return true;
    throw err;
  }
}
