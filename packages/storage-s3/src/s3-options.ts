import { tmpdir } from "node:os";
import type { S3Client } from "@aws-sdk/client-s3";
import { assertSafeKeyPrefix, describeValue, StowageError } from "@stowage/core";
import { bucketNameProblem } from "./bucket-name.js";
import { DEFAULT_PARTS_IN_FLIGHT } from "./concurrent-parts.js";
import type { S3Context } from "./s3-context.js";

// Limits and defaults stay in the package (the README's options table gives each value).
/** Size of each part when a stream of unknown length is uploaded in parts. */
export const DEFAULT_PART_SIZE_BYTES = 8 * 1024 * 1024;
/** The smallest part S3 accepts (all parts but the last). */
export const MIN_PART_SIZE_BYTES = 5 * 1024 * 1024;
/** The largest part S3 accepts. */
const MAX_PART_SIZE_BYTES = 5 * 1024 * 1024 * 1024;
/** The most parts one multipart upload may have. */
export const MAX_PARTS = 10_000;
/** The largest object one PutObject (and one CopyObject) can write. */
export const MAX_SINGLE_PUT_BYTES = 5 * 1024 * 1024 * 1024;
/** The most parts of one multipart upload that may be sent at once. */
const MAX_PARTS_IN_FLIGHT = 64;

/** Options of `createS3ObjectStore`. */
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
  /** Part size for streams larger than one part, 5 MiB to 5 GiB; default 8 MiB. */
  partSizeBytes?: number;
  /**
   * Parts of one multipart upload sent at once, 1 to 64; default 4. A put holds at most this many
   * parts plus one in memory.
   */
  partsInFlight?: number;
  /** Where create-only streams larger than one part are spooled before their single conditional PUT; default `os.tmpdir()`. */
  spoolDirectory?: string;
  /** Name used in messages; default `s3`. */
  name?: string;
}

function invalidOption(what: string, value: unknown, accepted: string): StowageError {
  return new StowageError(
    "INVALID_INPUT",
    `createS3ObjectStore: ${what} must be ${accepted}, got ${describeValue(value)}`,
  );
}

/** The store's context from its options, each checked, defaults filled in; INVALID_INPUT otherwise. */
export function s3ContextFrom(options: S3ObjectStoreOptions): S3Context {
  if (typeof options?.client?.send !== "function") {
    throw invalidOption("client", options?.client, "an S3Client (see createS3Client)");
  }
  const {
    client,
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
    client,
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
