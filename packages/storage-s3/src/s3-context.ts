import {
  GetObjectCommand,
  type GetObjectCommandOutput,
  HeadObjectCommand,
  type HeadObjectCommandOutput,
  type S3Client,
} from "@aws-sdk/client-s3";
import { describeValue, StowageError } from "@stowage/core";
import { isS3NotFound } from "./s3-errors.js";

/**
 * What every operation of one S3 store works with: its client, where its keys live and its
 * checked settings. The store's functions (`s3-put.ts`, `s3-multipart.ts`, `s3-move.ts`,
 * `s3-list.ts`, `s3-urls.ts`) take it first; `createS3ObjectStore` makes it once.
 */
export interface S3Context {
  readonly client: S3Client;
  readonly bucket: string;
  /** `""` or a safe prefix ending in `/`, put before every key. */
  readonly prefix: string;
  /** The server honours `If-None-Match: *` on PutObject. */
  readonly conditionalWrites: boolean;
  readonly verifiesUploadChecksums: boolean;
  readonly partSizeBytes: number;
  readonly partsInFlight: number;
  readonly spoolDirectory: string;
  /** Starts messages, e.g. `s3 put "k"`. */
  readonly name: string;
}

/** The S3 key of a store key (already validated). */
export const s3Key = (context: S3Context, key: string): string => context.prefix + key;

/** `x-amz-copy-source`: the bucket and the key, each segment URL-encoded. */
export function copySource(context: S3Context, key: string): string {
  return `${context.bucket}/${s3Key(context, key).split("/").map(encodeURIComponent).join("/")}`;
}

export function alreadyExists(context: S3Context, operation: string, key: string, cause?: unknown) {
  return new StowageError(
    "ALREADY_EXISTS",
    `${context.name} ${operation}: ${describeValue(key)} already exists`,
    {
      ...(cause === undefined ? {} : { cause }),
    },
  );
}

/** What an S3 call returned, or null when the key does not exist. */
async function unlessMissing<T>(call: Promise<T>): Promise<T | null> {
  try {
    return await call;
  } catch (err) {
    if (isS3NotFound(err)) return null;
    throw err;
  }
}

/** HeadObject of a key; null when it does not exist. */
export function headObject(
  context: S3Context,
  key: string,
  signal: AbortSignal | undefined,
): Promise<HeadObjectCommandOutput | null> {
  const command = new HeadObjectCommand({ Bucket: context.bucket, Key: s3Key(context, key) });
  return unlessMissing(context.client.send(command, { abortSignal: signal }));
}

/** GetObject of a key; null when it does not exist. */
export function getObject(
  context: S3Context,
  key: string,
  signal: AbortSignal | undefined,
): Promise<GetObjectCommandOutput | null> {
  const command = new GetObjectCommand({ Bucket: context.bucket, Key: s3Key(context, key) });
  return unlessMissing(context.client.send(command, { abortSignal: signal }));
}
