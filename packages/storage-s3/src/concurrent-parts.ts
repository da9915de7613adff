import { StowageError } from "@stowage/core";
import type { PartReader } from "./stream-parts.js";

/** Parts of one multipart upload in flight at once by default, as `@aws-sdk/lib-storage` does. */
export const DEFAULT_PARTS_IN_FLIGHT = 4;

/** A part stored: what CompleteMultipartUpload needs of it. */
export interface UploadedPart {
  PartNumber: number;
  ETag: string;
}

export interface ConcurrentPartsOptions {
  /** The first part, already read; then `parts.next()` until it gives null. */
  first: Uint8Array;
  parts: PartReader;
  /** Most parts uploading at once; memory holds at most this many parts plus the one being read. */
  inFlight: number;
  /** The most parts allowed; one more fails with TOO_LARGE (whose `details.limit` is `limitBytes`). */
  maxParts: number;
  limitBytes: number;
  /** Starts a message, e.g. `s3 put "k"`. */
  context: string;
  /** Uploads one part and resolves with its ETag; `signal` aborts it when another part failed. */
  uploadPart(partNumber: number, body: Uint8Array, signal: AbortSignal): Promise<string>;
  signal?: AbortSignal;
}

/**
 * Uploads the parts of a stream with up to `inFlight` requests at once, reading the next part
 * while earlier ones upload. On the first failure no new part starts, the others are aborted,
 * and the error is thrown only once every request has settled: a part can then no longer land
 * after the caller's AbortMultipartUpload, which is what leaves no parts stored.
 */
export async function uploadPartsConcurrently(options: ConcurrentPartsOptions): Promise<{
  parts: UploadedPart[];
  size: number;
}> {
  const { parts, inFlight, maxParts, context } = options;
  const stop = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal;
  const uploaded: UploadedPart[] = [];
  const running = new Set<Promise<void>>();
  let failure: { error: unknown } | undefined;
  let size = 0;

  const fail = (error: unknown) => {
    failure ??= { error };
    stop.abort(error);
  };

  try {
    let partNumber = 0;
    for (let part: Uint8Array | null = options.first; part && !failure; ) {
      partNumber++;
      if (partNumber > maxParts) {
        throw new StowageError(
          "TOO_LARGE",
          `${context}: a stream may have at most ${maxParts} parts of ${part.byteLength} bytes`,
          { details: { limit: options.limitBytes } },
        );
      }
      const number = partNumber;
      const body = part;
      const upload = options
        .uploadPart(number, body, signal)
        .then((etag) => {
          uploaded.push({ PartNumber: number, ETag: etag });
          size += body.byteLength;
        }, fail)
        .finally(() => running.delete(upload));
      running.add(upload);
      // Wait for a free slot before reading the next part: memory stays at inFlight + 1 parts.
      while (running.size >= inFlight && !failure) await Promise.race(running);
      if (failure) break;
      part = await parts.next();
    }
  } catch (err) {
    fail(err);
  }
  await Promise.all(running);
  if (failure) throw failure.error;
  return { parts: uploaded.sort((a, b) => a.PartNumber - b.PartNumber), size };
}
