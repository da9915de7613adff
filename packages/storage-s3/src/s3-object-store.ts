import { DeleteObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import {
  assertSafeKey,
  type DirectDownloadRequest,
  type DirectUploadRequest,
  defineObjectStore,
  type ObjectStore,
  type ObjectStoreDriver,
  type OperationOptions,
  type SignedRequest,
} from "@stowage/core";
import { getObject, headObject, s3Key } from "./s3-context.js";
import { fromS3Error } from "./s3-errors.js";
import { listObjects } from "./s3-list.js";
import { moveObject, touchObject } from "./s3-move.js";
import { type S3ObjectStoreOptions, s3ContextFrom } from "./s3-options.js";
import { putObject } from "./s3-put.js";
import { downloadUrl, uploadUrl } from "./s3-urls.js";

export type { S3ObjectStoreOptions } from "./s3-options.js";

/** The S3 object store; see {@link createS3ObjectStore}. */
export interface S3ObjectStore extends ObjectStore {
  readonly bucket: string;
  /** The prefix every key is stored under. */
  readonly prefix: string;
  readonly client: S3Client;
  /** The full S3 key of a store key (validates the key). */
  s3KeyFor(key: string): string;
  createUploadUrl(request: DirectUploadRequest, options?: OperationOptions): Promise<SignedRequest>;
  createDownloadUrl(request: DirectDownloadRequest, options?: OperationOptions): Promise<SignedRequest>;
  /** `s3://<bucket>/<prefix><key>`. */
  uriFor(key: string): string;
}

/**
 * An ObjectStore on an S3 bucket (AWS S3, R2, MinIO, Ceph RGW…). Puts stream: a stream body
 * larger than one part is sent as a multipart upload, `partsInFlight` parts at a time. Create-only
 * puts use `If-None-Match: *`; `move` is CopyObject + DeleteObject; `touch` copies the object
 * onto itself with its metadata replaced; direct upload/download URLs are presigned.
 */
export function createS3ObjectStore(options: S3ObjectStoreOptions): S3ObjectStore {
  const context = s3ContextFrom(options);
  const { client, bucket, prefix } = context;

  // Every error below reaches the caller through `mapError` (`defineObjectStore` calls it, for
  // errors in the middle of a streamed body too).
  const driver: ObjectStoreDriver = {
    name: context.name,
    atomicCreateOnly: context.conditionalWrites,
    directUploadVerifiesSha256: context.verifiesUploadChecksums,
    keepsContentType: true,
    mapError: fromS3Error,

    put: (key, body, { ifNoneMatch, contentType, signal }) =>
      putObject(context, key, body, { createOnly: ifNoneMatch === "*", contentType, signal }),

    async get(key, { signal }) {
      const result = await getObject(context, key, signal);
      if (!result) return null;
      return result.Body ? await result.Body.transformToByteArray() : new Uint8Array(0);
    },

    async stream(key, { signal }) {
      const result = await getObject(context, key, signal);
      if (!result) return null;
      return result.Body
        ? result.Body.transformToWebStream()
        : new ReadableStream<Uint8Array>({ start: (controller) => controller.close() });
    },

    async head(key, { signal }) {
      const result = await headObject(context, key, signal);
      if (!result) return null;
      return {
        size: result.ContentLength ?? 0,
        lastModified: result.LastModified ?? new Date(0),
        ...(result.ContentType ? { contentType: result.ContentType } : {}),
      };
    },

    async delete(key, { signal }) {
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: s3Key(context, key) }), {
        abortSignal: signal,
      });
    },

    list: ({ prefix: listPrefix, cursor, limit, signal }) =>
      listObjects(context, listPrefix, cursor, limit, signal),
    move: (from, to, { ifNoneMatch, signal }) => moveObject(context, from, to, ifNoneMatch === "*", signal),
    touch: (key, { signal }) => touchObject(context, key, signal),
    createUploadUrl: (request) => uploadUrl(context, request),
    createDownloadUrl: (request) => downloadUrl(context, request),
    uriFor: (key) => `s3://${bucket}/${s3Key(context, key)}`,
  };

  const store = defineObjectStore(driver);
  return Object.freeze({
    ...store,
    bucket,
    prefix,
    client,
    s3KeyFor(key: string) {
      assertSafeKey(key);
      return s3Key(context, key);
    },
  }) as S3ObjectStore;
}
