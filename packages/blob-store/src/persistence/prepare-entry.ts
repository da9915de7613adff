import {
  consoleLogger,
  describeValue,
  type Logger,
  mapConcurrent,
  parseBlobRef,
  StowageError,
  sha256Hex,
} from "@stowage/core";
import type { BlobStore } from "../blob-store.js";
import { decodeBase64, isBase64Image } from "./base64.js";
import { embeddedBase64Images } from "./embedded-images.js";
import { MAX_ENTRY_DEPTH, rewriteEntry } from "./entry-walker.js";
import { truncateForPersistence } from "./truncate-string.js";

/** Strings longer than this many UTF-16 units are cut before persisting. */
const DEFAULT_MAX_STRING_CHARS = 500_000;
/** Base64 image payloads of at least this many characters move to the blob store. */
export const BLOB_EXTERNALIZE_THRESHOLD = 1024;
/** Fields that only matter while a message streams; never persisted. */
const TRANSIENT_FIELDS: readonly string[] = ["partialJson", "jsonlEvents"];
/**
 * Fields replayed byte-for-byte to a provider (signatures, encrypted reasoning). A block holding one
 * is signed as a whole, so none of its strings is truncated.
 */
const PRESERVED_FIELDS: readonly string[] = [
  "signature",
  "thinkingSignature",
  "encrypted_content",
  "encryptedContent",
];

/** Parallel blob writes per entry. */
const PUT_CONCURRENCY = 4;

/** Options of {@link prepareEntryForPersistence}. */
export interface PrepareEntryOptions {
  /** Where externalized images go; only `put` is used. */
  /** Its `logger`, when it has one, is the default of `logger`. */
  blobs: Pick<BlobStore, "put"> & Partial<Pick<BlobStore, "logger">>;
  /** Strings longer than this many UTF-16 units are cut. Default 500,000. */
  maxStringChars?: number;
  /** Base64 image payloads of at least this many characters move to the blob store. Default 1,024. */
  externalizeThreshold?: number;
  /**
   * Receives a warning per image payload kept inline (details: `reason`, `field`, `chars`); default
   * the blob store's `logger`, else `consoleLogger`. Reasons are {@link ImageKeptInlineReason}s.
   */
  logger?: Logger;
  signal?: AbortSignal;
}

/**
 * Why an image payload stayed in the line instead of moving to the blob store: `not-base64`, an
 * image field whose text does not decode (it is not image data, so it is treated as text: cut when
 * over the string limit, `details.truncated`); `unknown-location`, base64 image data in a string
 * over the limit that is not an image location, the whole string or images embedded in its text
 * (kept whole rather than cut, but a loader would not know to resolve a ref there).
 */
export type ImageKeptInlineReason = "not-base64" | "unknown-location";

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
 * Makes a session entry fit for a JSONL line: base64 image payloads of at least
 * `externalizeThreshold` characters go to the blob store and are replaced by their `blob:sha256:`
 * ref, wherever an agent puts them (content blocks, the declared per-agent fields, `data:image/`
 * URLs anywhere) and however the base64 is written (canonical, line-wrapped, URL-safe, unpadded);
 * other strings over `maxStringChars` are cut with a notice; transient streaming fields are dropped.
 * An image payload is never cut: one that cannot be externalized stays whole and is reported to
 * the logger. Parts nested deeper than {@link MAX_ENTRY_DEPTH} objects and arrays are kept as they
 * are (one warning per entry). Returns a new entry (the input is not mutated) once every blob it references is
 * durably stored.
 */
export async function prepareEntryForPersistence<T>(entry: T, options: PrepareEntryOptions): Promise<T> {
  const { blobs, signal, logger = blobs?.logger ?? consoleLogger } = options;
  const maxStringChars = positiveInteger(options.maxStringChars, "maxStringChars", DEFAULT_MAX_STRING_CHARS);
  const threshold = positiveInteger(
    options.externalizeThreshold,
    "externalizeThreshold",
    BLOB_EXTERNALIZE_THRESHOLD,
  );
  const keptInline = (
    reason: ImageKeptInlineReason,
    field: string | undefined,
    chars: number,
    truncated: boolean,
  ) =>
    logger.warn(
      { reason, field, chars, truncated },
      `image payload kept inline in the session line (${reason})`,
    );

  const pending: { bytes: Uint8Array; hash: string }[] = [];
  let tooDeep = false;
  const prepared = rewriteEntry(entry, {
    tooDeep() {
      tooDeep = true;
    },
    image({ payload, field }) {
      const chars = payload.length;
      if (chars < threshold || parseBlobRef(payload) !== null) return undefined;
      const bytes = decodeBase64(payload);
      if (!bytes) {
        // Text in an image field is not image data: it gets no exemption from the string limit,
        // or any string could pass the limit behind a `data:image/png;base64,` prefix.
        const truncated = chars > maxStringChars;
        keptInline("not-base64", field, chars, truncated);
        return truncated ? truncateForPersistence(payload, maxStringChars) : undefined;
      }
      const hash = sha256Hex(bytes);
      pending.push({ bytes, hash });
      return `blob:sha256:${hash}`;
    },
    string(value, field, owner) {
      if (value.length <= maxStringChars || (owner && isSignedBlock(owner))) return value;
      // Checked whole, not by its first bytes: image data is kept whole only if it really is some.
      if (isBase64Image(value) && decodeBase64(value) !== null) {
        keptInline("unknown-location", field, value.length, false);
        return value;
      }
      // Images inside text do not count towards the limit and are never split: the text around
      // them is what gets cut.
      const images = embeddedBase64Images(value, threshold);
      const kept = truncateForPersistence(value, maxStringChars, images);
      if (images.length > 0) {
        const imageChars = images.reduce((sum, span) => sum + (span.end - span.start), 0);
        keptInline("unknown-location", field, imageChars, kept !== value);
      }
      return kept;
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

  if (tooDeep) {
    logger.warn(
      { maxDepth: MAX_ENTRY_DEPTH },
      `session entry nested deeper than ${MAX_ENTRY_DEPTH} levels: its deeper parts are kept as they are`,
    );
  }

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
