import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  UploadPartCommand,
} from "@aws-sdk/client-s3";
import { describeValue, type PutResult, StowageError } from "@stowage/core";
import { uploadPartsConcurrently } from "./concurrent-parts.js";
import { type S3Context, s3Key } from "./s3-context.js";
import { MAX_PARTS } from "./s3-options.js";
import type { PartReader } from "./stream-parts.js";

/** A stream larger than one part, its first part already read. */
export interface MultipartBody {
  first: Uint8Array;
  parts: PartReader;
  contentType: string | undefined;
  /** What the result's `created` says: the key did not exist before. */
  created: boolean;
  signal: AbortSignal | undefined;
}

/**
 * A multipart upload of a stream, `partsInFlight` parts at a time. Any failure aborts the upload
 * once every part has settled, so no part stays stored.
 */
export async function putMultipart(context: S3Context, key: string, body: MultipartBody): Promise<PutResult> {
  const { client, bucket, name } = context;
  const { first, parts, contentType, created, signal } = body;
  const Key = s3Key(context, key);
  const upload = await client.send(
    new CreateMultipartUploadCommand({
      Bucket: bucket,
      Key,
      ...(contentType ? { ContentType: contentType } : {}),
    }),
    { abortSignal: signal },
  );
  const uploadId = upload.UploadId;
  if (!uploadId) throw new StowageError("INTERNAL", `${name} put: the server returned no upload id`);
  try {
    const { parts: done, size } = await uploadPartsConcurrently({
      first,
      parts,
      inFlight: context.partsInFlight,
      maxParts: MAX_PARTS,
      limitBytes: MAX_PARTS * context.partSizeBytes,
      context: `${name} put ${describeValue(key)}`,
      signal,
      async uploadPart(partNumber, part, partSignal) {
        const result = await client.send(
          new UploadPartCommand({
            Bucket: bucket,
            Key,
            UploadId: uploadId,
            PartNumber: partNumber,
            Body: part,
            ContentLength: part.byteLength,
          }),
          { abortSignal: partSignal },
        );
        if (!result.ETag) throw new StowageError("INTERNAL", `${name} put: the server returned no part ETag`);
        return result.ETag;
      },
    });
    await client.send(
      new CompleteMultipartUploadCommand({
        Bucket: bucket,
        Key,
        UploadId: uploadId,
        MultipartUpload: { Parts: done },
      }),
      { abortSignal: signal },
    );
    return { key, size, created };
  } catch (err) {
    // Without the abort, the parts stay stored (and billed) until a lifecycle rule removes them.
    await client
      .send(new AbortMultipartUploadCommand({ Bucket: bucket, Key, UploadId: uploadId }))
      .catch(() => {});
    throw err;
  }
}
