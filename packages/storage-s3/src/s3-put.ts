import { createReadStream } from "node:fs";
import { rm } from "node:fs/promises";
import { PutObjectCommand, type PutObjectCommandInput } from "@aws-sdk/client-s3";
import { describeValue, type PutResult, StowageError } from "@stowage/core";
import { writeTempFile } from "@stowage/core/fs";
import { alreadyExists, headObject, type S3Context, s3Key } from "./s3-context.js";
import { isS3ConditionalConflict, isS3PreconditionFailed } from "./s3-errors.js";
import { putMultipart } from "./s3-multipart.js";
import { MAX_SINGLE_PUT_BYTES } from "./s3-options.js";
import { createPartReader } from "./stream-parts.js";

/**
 * Largest body a plain put sends before it knows whether the key exists (to report `created`). Up
 * to 1 MiB a body takes about as long to send as a HEAD's round trip (1 MiB at ~100 MB/s is
 * ~10 ms, an S3 request's latency), so sending it at once costs at most what looking first always
 * costs; a larger body is looked at first rather than sent twice.
 */
const CREATE_FIRST_MAX_BYTES = 1024 * 1024;

/** Times a create-only put is retried when AWS reports a conflicting concurrent write (409). */
const CONDITIONAL_CONFLICT_RETRIES = 3;

/** What one put asks for, besides its key and body. */
export interface PutRequest {
  createOnly: boolean;
  contentType: string | undefined;
  signal: AbortSignal | undefined;
}

const contentTypeInput = (contentType: string | undefined) =>
  contentType ? { ContentType: contentType } : {};

/** A conditional PutObject; `body` is called once per attempt (AWS may ask for a retry). */
export async function putCreateOnly(
  context: S3Context,
  key: string,
  input: Omit<PutObjectCommandInput, "Bucket" | "Key" | "Body">,
  body: () => PutObjectCommandInput["Body"],
  signal: AbortSignal | undefined,
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await context.client.send(
        new PutObjectCommand({
          ...input,
          Bucket: context.bucket,
          Key: s3Key(context, key),
          Body: body(),
          IfNoneMatch: "*",
        }),
        { abortSignal: signal },
      );
      return;
    } catch (err) {
      if (isS3PreconditionFailed(err)) throw alreadyExists(context, "put", key, err);
      if (!isS3ConditionalConflict(err) || attempt >= CONDITIONAL_CONFLICT_RETRIES) throw err;
    }
  }
}

async function putBytes(
  context: S3Context,
  key: string,
  bytes: Uint8Array,
  { createOnly, contentType, signal }: PutRequest,
): Promise<PutResult> {
  const input = { ContentLength: bytes.byteLength, ...contentTypeInput(contentType) };
  if (createOnly && context.conditionalWrites) {
    await putCreateOnly(context, key, input, () => bytes, signal);
    return { key, size: bytes.byteLength, created: true };
  }
  let created: boolean;
  if (context.conditionalWrites && bytes.byteLength <= CREATE_FIRST_MAX_BYTES) {
    // `created` of a small body: a conditional PutObject tells it in the one request that stores
    // a new object, where a HEAD first costs every put a round trip; only a put over an existing
    // object sends its body twice (refused, then stored).
    try {
      await putCreateOnly(context, key, input, () => bytes, signal);
      return { key, size: bytes.byteLength, created: true };
    } catch (err) {
      if (!StowageError.is(err, "ALREADY_EXISTS") && !isS3ConditionalConflict(err)) throw err;
    }
    created = false;
  } else {
    created = (await headObject(context, key, signal)) === null;
    if (createOnly && !created) throw alreadyExists(context, "put", key);
  }
  await context.client.send(
    new PutObjectCommand({ ...input, Bucket: context.bucket, Key: s3Key(context, key), Body: bytes }),
    { abortSignal: signal },
  );
  return { key, size: bytes.byteLength, created };
}

/**
 * A create-only stream larger than one part goes to a temp file first, then up in one
 * conditional PutObject: servers such as Ceph RGW 16 ignore `If-None-Match` on
 * CompleteMultipartUpload, so only a single PUT keeps create-only atomic. Memory stays flat.
 */
async function putSpooled(
  context: S3Context,
  key: string,
  body: ReadableStream<Uint8Array>,
  contentType: string | undefined,
  signal: AbortSignal | undefined,
): Promise<PutResult> {
  const temp = await writeTempFile(context.spoolDirectory, body, { fsync: false, signal });
  try {
    const input = { ContentLength: temp.size, ...contentTypeInput(contentType) };
    await putCreateOnly(context, key, input, () => createReadStream(temp.path), signal);
    return { key, size: temp.size, created: true };
  } finally {
    await rm(temp.path, { force: true });
  }
}

async function putStream(
  context: S3Context,
  key: string,
  body: ReadableStream<Uint8Array>,
  request: PutRequest,
): Promise<PutResult> {
  const { createOnly, contentType, signal } = request;
  const parts = createPartReader(
    body,
    context.partSizeBytes,
    signal,
    `${context.name} put ${describeValue(key)}`,
  );
  try {
    const first = (await parts.next()) ?? new Uint8Array(0);
    if (parts.finished) return await putBytes(context, key, first, request);
    if (createOnly && context.conditionalWrites) {
      // The HEAD spares spooling a body that cannot be stored; the conditional PUT decides races.
      if ((await headObject(context, key, signal)) !== null) throw alreadyExists(context, "put", key);
      const rest = parts.remaining(first, MAX_SINGLE_PUT_BYTES);
      return await putSpooled(context, key, rest, contentType, signal);
    }
    const existed = (await headObject(context, key, signal)) !== null;
    if (createOnly && existed) throw alreadyExists(context, "put", key);
    return await putMultipart(context, key, { first, parts, contentType, created: !existed, signal });
  } catch (err) {
    await parts.cancel(err);
    throw err;
  }
}

/**
 * Stores a body: bytes in one PutObject; a stream of up to one part likewise, a larger one as a
 * multipart upload, or (create-only on a server with conditional writes) spooled and sent as one
 * conditional PutObject.
 */
export function putObject(
  context: S3Context,
  key: string,
  body: Uint8Array | ReadableStream<Uint8Array>,
  request: PutRequest,
): Promise<PutResult> {
  return body instanceof Uint8Array
    ? putBytes(context, key, body, request)
    : putStream(context, key, body, request);
}
