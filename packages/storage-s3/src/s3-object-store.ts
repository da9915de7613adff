import { createReadStream } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  type HeadObjectCommandOutput,
  ListObjectsV2Command,
  PutObjectCommand,
  type PutObjectCommandInput,
  type S3Client,
  UploadPartCommand,
} from "@aws-sdk/client-s3";
import {
  assertSafeKey,
  assertSafeKeyPrefix,
  contentDisposition,
  type DirectDownloadRequest,
  type DirectUploadRequest,
  defineObjectStore,
  describeValue,
  keyProblem,
  type ListItem,
  type ObjectStore,
  type ObjectStoreDriver,
  type OperationOptions,
  type PutResult,
  type SignedRequest,
  StowageError,
} from "@stowage/core";
import { writeTempFile } from "@stowage/core/fs";
import { bucketNameProblem } from "./bucket-name.js";
import { DEFAULT_PARTS_IN_FLIGHT, uploadPartsConcurrently } from "./concurrent-parts.js";
import { presignGet, presignPut } from "./presign.js";
import { fromS3Error, isS3ConditionalConflict, isS3NotFound, isS3PreconditionFailed } from "./s3-errors.js";
import { createPartReader, type PartReader } from "./stream-parts.js";

/** Size of each part when a stream of unknown length is uploaded in parts. */
export const DEFAULT_PART_SIZE_BYTES = 8 * 1024 * 1024;
/** The smallest part S3 accepts (all parts but the last). */
export const MIN_PART_SIZE_BYTES = 5 * 1024 * 1024;
/** The largest part S3 accepts. */
export const MAX_PART_SIZE_BYTES = 5 * 1024 * 1024 * 1024;
/** The most parts one multipart upload may have. */
export const MAX_PARTS = 10_000;
/** The largest object one PutObject (and one CopyObject) can write. */
export const MAX_SINGLE_PUT_BYTES = 5 * 1024 * 1024 * 1024;
/** The most parts of one multipart upload that may be sent at once. */
export const MAX_PARTS_IN_FLIGHT = 64;
/** Times a create-only put is retried when AWS reports a conflicting concurrent write (409). */
const CONDITIONAL_CONFLICT_RETRIES = 3;

/** Options of {@link createS3ObjectStore}. */
export interface S3ObjectStoreOptions {
  /** A client from `createS3Client` (or any S3Client with `WHEN_REQUIRED` checksums). */
  client: S3Client;
  bucket: string;
  /** Keys are stored under this prefix: `""` (default) or a safe prefix ending in `/`. */
  prefix?: string;
  /**
   * The server honours `If-None-Match: *` on PutObject (AWS S3, R2, MinIO, Ceph RGW 16 all do).
   * Default true: create-only puts and moves are atomic. Set false for servers that ignore it:
   * create-only then checks with HEAD first, which a concurrent writer can race.
   */
  conditionalWrites?: boolean;
  /**
   * The server refuses a presigned upload whose body does not hash to the `x-amz-checksum-sha256`
   * the URL binds. Default false: the store declares `directUploadVerifiesSha256: false` and
   * callers (`@stowage/uploads`) verify the bytes after upload by hashing them, which is right on
   * every server. Set true only for a server known to check the body (AWS S3): Ceph RGW 16 signs
   * the header but stores any body of the signed length, so trusting it there serves other bytes.
   */
  verifiesUploadChecksums?: boolean;
  /** Part size for streams larger than one part, {@link MIN_PART_SIZE_BYTES} to {@link MAX_PART_SIZE_BYTES}; default {@link DEFAULT_PART_SIZE_BYTES}. */
  partSizeBytes?: number;
  /**
   * Parts of one multipart upload sent at once, 1 to {@link MAX_PARTS_IN_FLIGHT}; default
   * {@link DEFAULT_PARTS_IN_FLIGHT} (4). A put holds at most this many parts plus one in memory.
   */
  partsInFlight?: number;
  /** Where create-only streams larger than one part are spooled before their single conditional PUT; default `os.tmpdir()`. */
  spoolDirectory?: string;
  /** Name used in messages; default `s3`. */
  name?: string;
}

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

function invalidOption(what: string, value: unknown, accepted: string): StowageError {
  return new StowageError(
    "INVALID_INPUT",
    `createS3ObjectStore: ${what} must be ${accepted}, got ${describeValue(value)}`,
  );
}

function validateOptions(options: S3ObjectStoreOptions): Required<Omit<S3ObjectStoreOptions, "client">> {
  if (typeof options?.client?.send !== "function") {
    throw invalidOption("client", options?.client, "an S3Client (see createS3Client)");
  }
  const {
    bucket,
    prefix = "",
    conditionalWrites = true,
    verifiesUploadChecksums = false,
    partSizeBytes = DEFAULT_PART_SIZE_BYTES,
    partsInFlight = DEFAULT_PARTS_IN_FLIGHT,
  } = options;
  const bucketProblem = bucketNameProblem(bucket);
  if (bucketProblem) throw new StowageError("INVALID_INPUT", `createS3ObjectStore: bucket ${bucketProblem}`);
  if (prefix !== "") {
    assertSafeKeyPrefix(prefix, "createS3ObjectStore: prefix");
    if (!prefix.endsWith("/")) throw invalidOption("prefix", prefix, `"" or a prefix ending in "/"`);
  }
  if (typeof conditionalWrites !== "boolean") {
    throw invalidOption("conditionalWrites", conditionalWrites, "a boolean");
  }
  if (typeof verifiesUploadChecksums !== "boolean") {
    throw invalidOption("verifiesUploadChecksums", verifiesUploadChecksums, "a boolean");
  }
  if (
    !Number.isSafeInteger(partSizeBytes) ||
    partSizeBytes < MIN_PART_SIZE_BYTES ||
    partSizeBytes > MAX_PART_SIZE_BYTES
  ) {
    throw invalidOption(
      "partSizeBytes",
      partSizeBytes,
      `an integer from ${MIN_PART_SIZE_BYTES} to ${MAX_PART_SIZE_BYTES}`,
    );
  }
  if (!Number.isSafeInteger(partsInFlight) || partsInFlight < 1 || partsInFlight > MAX_PARTS_IN_FLIGHT) {
    throw invalidOption("partsInFlight", partsInFlight, `an integer from 1 to ${MAX_PARTS_IN_FLIGHT}`);
  }
  const spoolDirectory = options.spoolDirectory ?? tmpdir();
  if (typeof spoolDirectory !== "string" || spoolDirectory.length === 0) {
    throw invalidOption("spoolDirectory", spoolDirectory, "a directory path");
  }
  const name = options.name ?? "s3";
  if (typeof name !== "string" || name.length === 0) throw invalidOption("name", name, "a non-empty string");
  return {
    bucket,
    prefix,
    conditionalWrites,
    verifiesUploadChecksums,
    partSizeBytes,
    partsInFlight,
    spoolDirectory,
    name,
  };
}

/** `x-amz-copy-source`: the bucket and the key, each segment URL-encoded. */
function copySource(bucket: string, s3Key: string): string {
  return `${bucket}/${s3Key.split("/").map(encodeURIComponent).join("/")}`;
}

/**
 * An ObjectStore on an S3 bucket (AWS S3, R2, MinIO, Ceph RGW…). Puts stream: a stream body
 * larger than one part is sent as a multipart upload, `partsInFlight` parts at a time. Create-only
 * puts use `If-None-Match: *`; `move` is CopyObject + DeleteObject; `touch` copies the object
 * onto itself with its metadata replaced; direct upload/download URLs are presigned.
 */
export function createS3ObjectStore(options: S3ObjectStoreOptions): S3ObjectStore {
  const settings = validateOptions(options);
  const { client } = options;
  const {
    bucket,
    prefix,
    conditionalWrites,
    verifiesUploadChecksums,
    partSizeBytes,
    partsInFlight,
    spoolDirectory,
    name,
  } = settings;
  const s3Key = (key: string) => prefix + key;

  const alreadyExists = (operation: string, key: string, cause?: unknown) =>
    new StowageError("ALREADY_EXISTS", `${name} ${operation}: ${describeValue(key)} already exists`, {
      ...(cause === undefined ? {} : { cause }),
    });

  /** What an S3 call returned, or null when the key does not exist. */
  async function unlessMissing<T>(call: Promise<T>): Promise<T | null> {
    try {
      return await call;
    } catch (err) {
      if (isS3NotFound(err)) return null;
      throw err;
    }
  }

  const headRaw = (key: string, signal?: AbortSignal): Promise<HeadObjectCommandOutput | null> =>
    unlessMissing(
      client.send(new HeadObjectCommand({ Bucket: bucket, Key: s3Key(key) }), { abortSignal: signal }),
    );

  const getObject = (key: string, signal: AbortSignal | undefined) =>
    unlessMissing(
      client.send(new GetObjectCommand({ Bucket: bucket, Key: s3Key(key) }), { abortSignal: signal }),
    );

  /** A conditional PutObject; `body` is called once per attempt (AWS may ask for a retry). */
  async function putCreateOnly(
    key: string,
    input: Omit<PutObjectCommandInput, "Bucket" | "Key" | "Body">,
    body: () => PutObjectCommandInput["Body"],
    signal: AbortSignal | undefined,
  ): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await client.send(
          new PutObjectCommand({ ...input, Bucket: bucket, Key: s3Key(key), Body: body(), IfNoneMatch: "*" }),
          { abortSignal: signal },
        );
        return;
      } catch (err) {
        if (isS3PreconditionFailed(err)) throw alreadyExists("put", key, err);
        if (!isS3ConditionalConflict(err) || attempt >= CONDITIONAL_CONFLICT_RETRIES) throw err;
      }
    }
  }

  async function putBytes(
    key: string,
    bytes: Uint8Array,
    createOnly: boolean,
    contentType: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<PutResult> {
    const input = { ContentLength: bytes.byteLength, ...(contentType ? { ContentType: contentType } : {}) };
    if (createOnly && conditionalWrites) {
      await putCreateOnly(key, input, () => bytes, signal);
      return { key, size: bytes.byteLength, created: true };
    }
    const existed = (await headRaw(key, signal)) !== null;
    if (createOnly && existed) throw alreadyExists("put", key);
    await client.send(new PutObjectCommand({ ...input, Bucket: bucket, Key: s3Key(key), Body: bytes }), {
      abortSignal: signal,
    });
    return { key, size: bytes.byteLength, created: !existed };
  }

  /**
   * A create-only stream larger than one part goes to a temp file first, then up in one
   * conditional PutObject: servers such as Ceph RGW 16 ignore `If-None-Match` on
   * CompleteMultipartUpload, so only a single PUT keeps create-only atomic. Memory stays flat.
   */
  async function putSpooled(
    key: string,
    body: ReadableStream<Uint8Array>,
    contentType: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<PutResult> {
    const temp = await writeTempFile(spoolDirectory, body, { fsync: false, signal });
    try {
      const input = { ContentLength: temp.size, ...(contentType ? { ContentType: contentType } : {}) };
      await putCreateOnly(key, input, () => createReadStream(temp.path), signal);
      return { key, size: temp.size, created: true };
    } finally {
      await rm(temp.path, { force: true });
    }
  }

  async function putMultipart(
    key: string,
    first: Uint8Array,
    parts: PartReader,
    contentType: string | undefined,
    created: boolean,
    signal: AbortSignal | undefined,
  ): Promise<PutResult> {
    const upload = await client.send(
      new CreateMultipartUploadCommand({
        Bucket: bucket,
        Key: s3Key(key),
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
        inFlight: partsInFlight,
        maxParts: MAX_PARTS,
        limitBytes: MAX_PARTS * partSizeBytes,
        context: `${name} put ${describeValue(key)}`,
        signal,
        async uploadPart(partNumber, body, partSignal) {
          const result = await client.send(
            new UploadPartCommand({
              Bucket: bucket,
              Key: s3Key(key),
              UploadId: uploadId,
              PartNumber: partNumber,
              Body: body,
              ContentLength: body.byteLength,
            }),
            { abortSignal: partSignal },
          );
          if (!result.ETag)
            throw new StowageError("INTERNAL", `${name} put: the server returned no part ETag`);
          return result.ETag;
        },
      });
      await client.send(
        new CompleteMultipartUploadCommand({
          Bucket: bucket,
          Key: s3Key(key),
          UploadId: uploadId,
          MultipartUpload: { Parts: done },
        }),
        { abortSignal: signal },
      );
      return { key, size, created };
    } catch (err) {
      // Without the abort, the parts stay stored (and billed) until a lifecycle rule removes them.
      await client
        .send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: s3Key(key), UploadId: uploadId }))
        .catch(() => {});
      throw err;
    }
  }

  async function putStream(
    key: string,
    body: ReadableStream<Uint8Array>,
    createOnly: boolean,
    contentType: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<PutResult> {
    const parts = createPartReader(body, partSizeBytes, signal, `${name} put ${describeValue(key)}`);
    try {
      const first = (await parts.next()) ?? new Uint8Array(0);
      if (parts.finished) return await putBytes(key, first, createOnly, contentType, signal);
      if (createOnly && conditionalWrites) {
        // The HEAD spares spooling a body that cannot be stored; the conditional PUT decides races.
        if ((await headRaw(key, signal)) !== null) throw alreadyExists("put", key);
        return await putSpooled(key, parts.remaining(first, MAX_SINGLE_PUT_BYTES), contentType, signal);
      }
      const existed = (await headRaw(key, signal)) !== null;
      if (createOnly && existed) throw alreadyExists("put", key);
      return await putMultipart(key, first, parts, contentType, !existed, signal);
    } catch (err) {
      await parts.cancel(err);
      throw err;
    }
  }

  async function copy(
    from: string,
    to: string,
    source: HeadObjectCommandOutput,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    if ((source.ContentLength ?? 0) > MAX_SINGLE_PUT_BYTES) {
      throw new StowageError(
        "TOO_LARGE",
        `${name}: ${describeValue(from)} is larger than ${MAX_SINGLE_PUT_BYTES} bytes, the most one CopyObject can copy`,
      );
    }
    await client.send(
      new CopyObjectCommand({
        Bucket: bucket,
        Key: s3Key(to),
        CopySource: copySource(bucket, s3Key(from)),
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
    from: string,
    to: string,
    source: HeadObjectCommandOutput,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const object = await client.send(
      new GetObjectCommand({
        Bucket: bucket,
        Key: s3Key(from),
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
        to,
        input,
        () => {
          if (used) throw new StowageError("CONFLICT", `${name} move: retry of a streamed copy`);
          used = true;
          return object.Body;
        },
        signal,
      );
    } catch (err) {
      (object.Body as { destroy?: () => void } | undefined)?.destroy?.();
      if (StowageError.is(err, "ALREADY_EXISTS")) throw alreadyExists("move", to, err);
      throw err;
    }
  }

  // Every error below reaches the caller through `mapError` (`defineObjectStore` calls it, for
  // errors in the middle of a streamed body too).
  const driver: ObjectStoreDriver = {
    name,
    atomicCreateOnly: conditionalWrites,
    directUploadVerifiesSha256: verifiesUploadChecksums,
    keepsContentType: true,
    mapError: fromS3Error,

    put(key, body, { ifNoneMatch, contentType, signal }) {
      const createOnly = ifNoneMatch === "*";
      return body instanceof Uint8Array
        ? putBytes(key, body, createOnly, contentType, signal)
        : putStream(key, body, createOnly, contentType, signal);
    },

    async get(key, { signal }) {
      const result = await getObject(key, signal);
      if (!result) return null;
      return result.Body ? await result.Body.transformToByteArray() : new Uint8Array(0);
    },

    async stream(key, { signal }) {
      const result = await getObject(key, signal);
      if (!result) return null;
      return result.Body
        ? result.Body.transformToWebStream()
        : new ReadableStream<Uint8Array>({ start: (controller) => controller.close() });
    },

    async head(key, { signal }) {
      const result = await headRaw(key, signal);
      if (!result) return null;
      return {
        size: result.ContentLength ?? 0,
        lastModified: result.LastModified ?? new Date(0),
        ...(result.ContentType ? { contentType: result.ContentType } : {}),
      };
    },

    async delete(key, { signal }) {
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: s3Key(key) }), {
        abortSignal: signal,
      });
    },

    async list({ prefix: listPrefix, cursor, limit, signal }) {
      const result = await client.send(
        new ListObjectsV2Command({
          Bucket: bucket,
          Prefix: prefix + listPrefix,
          MaxKeys: limit,
          ...(cursor === undefined ? {} : { StartAfter: prefix + cursor }),
        }),
        { abortSignal: signal },
      );
      const items: ListItem[] = [];
      let last: string | undefined;
      for (const object of result.Contents ?? []) {
        if (!object.Key?.startsWith(prefix)) continue;
        last = object.Key.slice(prefix.length);
        // Keys written by other tools that this store could never read back are not listed.
        if (keyProblem(last) !== undefined) continue;
        items.push({ key: last, size: object.Size ?? 0, lastModified: object.LastModified ?? new Date(0) });
      }
      if (result.IsTruncated && last === undefined) {
        throw new StowageError("INTERNAL", `${name} list: the server said there is more but sent no key`);
      }
      return { items, cursor: result.IsTruncated ? last : undefined };
    },

    async move(from, to, { ifNoneMatch, signal }) {
      const source = await headRaw(from, signal);
      if (!source) throw new StowageError("NOT_FOUND", `${name} move: ${describeValue(from)} does not exist`);
      let created = true;
      if (ifNoneMatch === "*" && conditionalWrites) {
        // The HEAD spares streaming the bytes in the common case; the conditional PUT decides races.
        if ((await headRaw(to, signal)) !== null) throw alreadyExists("move", to);
        await copyCreateOnly(from, to, source, signal);
      } else {
        created = (await headRaw(to, signal)) === null;
        if (ifNoneMatch === "*" && !created) throw alreadyExists("move", to);
        await copy(from, to, source, signal);
      }
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: s3Key(from) }), {
        abortSignal: signal,
      });
      return { key: to, size: source.ContentLength ?? 0, created };
    },

    async touch(key, { signal }) {
      const source = await headRaw(key, signal);
      if (!source) return false;
      try {
        // A copy onto itself is allowed only when something changes: REPLACE the metadata
        // with the same values, which gives the object a new Last-Modified.
        await client.send(
          new CopyObjectCommand({
            Bucket: bucket,
            Key: s3Key(key),
            CopySource: copySource(bucket, s3Key(key)),
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
    },

    createUploadUrl(request) {
      return presignPut(client, {
        bucket,
        key: s3Key(request.key),
        contentType: request.contentType,
        contentLength: request.contentLength,
        ...(request.sha256 === undefined ? {} : { sha256: request.sha256 }),
        expiresInSeconds: request.expiresInSeconds,
      });
    },

    createDownloadUrl({ key, expiresInSeconds, disposition, filename }) {
      // Without either, the object's own Content-Disposition (usually none) is served.
      const override =
        disposition === undefined && filename === undefined
          ? undefined
          : contentDisposition(disposition ?? "attachment", filename ?? key.slice(key.lastIndexOf("/") + 1));
      return presignGet(client, {
        bucket,
        key: s3Key(key),
        expiresInSeconds,
        ...(override === undefined ? {} : { contentDisposition: override }),
      });
    },

    uriFor: (key) => `s3://${bucket}/${s3Key(key)}`,
  };

  const store = defineObjectStore(driver);
  return Object.freeze({
    ...store,
    bucket,
    prefix,
    client,
    s3KeyFor(key: string) {
      assertSafeKey(key);
      return s3Key(key);
    },
  }) as S3ObjectStore;
}
