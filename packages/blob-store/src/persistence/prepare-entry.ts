import { describeValue, mapConcurrent, StowageError } from "@stowage/core";
import { isBlobRef } from "../blob-ref.js";
import type { BlobStore } from "../blob-store.js";
import { sha256Hex } from "../hashing.js";
import { decodeCanonicalBase64 } from "./base64.js";
import { rewriteEntry } from "./entry-walker.js";
import { truncateForPersistence } from "./truncate-string.js";

/** Strings longer than this many UTF-16 units are cut before persisting. */
export const DEFAULT_MAX_STRING_CHARS = 500_000;
/** Base64 image payloads of at least this many characters move to the blob store. */
export const BLOB_EXTERNALIZE_THRESHOLD = 1024;
/** Fields that only matter while a message streams; never persisted. */
export const TRANSIENT_FIELDS: readonly string[] = ["partialJson", "jsonlEvents"];
/**
 * Fields replayed byte-for-byte to a provider (signatures, encrypted reasoning). A block holding one
 * is signed as a whole, so none of its strings is truncated.
 */
export const PRESERVED_FIELDS: readonly string[] = [
  "signature",
  "thinkingSignature",
  "encrypted_content",
  "encryptedContent",
];

/** Parallel blob writes per entry. */
const PUT_CONCURRENCY = 4;

export interface PrepareEntryOptions {
  /** Where externalized images go; only `put` is used. */
  blobs: Pick<BlobStore, "put">;
  /** Default {@link DEFAULT_MAX_STRING_CHARS}. */
  maxStringChars?: number;
  /** Default {@link BLOB_EXTERNALIZE_THRESHOLD}. */
  externalizeThreshold?: number;
  signal?: AbortSignal;
}

function positiveInteger(value: unknown, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
    throw new StowageError(
      "INVALID_INPUT",
      `${name} must be a positive integer, got ${describeValue(value)}`,
    );
  }
  return value;
}

const transient = new Set(TRANSIENT_FIELDS);

function isSignedBlock(owner: Record<string, unknown>): boolean {
  if (owner.type === "redacted_thinking") return true;
  return PRESERVED_FIELDS.some((field) => typeof owner[field] === "string" && owner[field] !== "");
}

/**
 * Makes a session entry fit for a JSONL line: base64 images in `content` arrays (and `data:` image
 * URLs) of at least `externalizeThreshold` characters go to the blob store and are replaced by
 * their `blob:sha256:` ref; other strings over `maxStringChars` are cut with a notice; transient
 * streaming fields are dropped. Returns a new entry (the input is not mutated) once every blob it
 * references is durably stored.
 */
export async function prepareEntryForPersistence<T>(entry: T, options: PrepareEntryOptions): Promise<T> {
  const { blobs, signal } = options;
  const maxStringChars = positiveInteger(options.maxStringChars, "maxStringChars", DEFAULT_MAX_STRING_CHARS);
  const threshold = positiveInteger(
    options.externalizeThreshold,
    "externalizeThreshold",
    BLOB_EXTERNALIZE_THRESHOLD,
  );

  const pending: { bytes: Uint8Array; hash: string }[] = [];
  const prepared = rewriteEntry(entry, {
    image({ payload }) {
      if (payload.length < threshold || isBlobRef(payload)) return undefined;
      const bytes = decodeCanonicalBase64(payload);
      if (!bytes) return undefined;
      const hash = sha256Hex(bytes);
      pending.push({ bytes, hash });
      return `blob:sha256:${hash}`;
    },
    string(value, _field, owner) {
      if (value.length <= maxStringChars || (owner && isSignedBlock(owner))) return value;
      return truncateForPersistence(value, maxStringChars);
    },
    dropField: (field, place) => place !== "nested" && transient.has(field),
    rewrittenObject(original, rewritten) {
      const content = rewritten.content;
      if (
        typeof content === "string" &&
        content !== original.content &&
        typeof rewritten.lineCount === "number"
      ) {
        rewritten.lineCount = content.split("\n").length;
      }
    },
  });

  // The entry is returned only after every blob it references is stored.
  await mapConcurrent(
    pending,
    PUT_CONCURRENCY,
    async ({ bytes, hash }) => {
      const stored = await blobs.put(bytes, { signal });
      if (stored.hash !== hash) {
        throw new StowageError(
          "INTEGRITY",
          `blob store returned hash ${stored.hash} for bytes hashing to ${hash}`,
        );
      }
    },
    signal,
  );
  return prepared;
}
