import { describeValue } from "./describe-value.js";
import { StowageError } from "./errors.js";
import type { OperationOptions } from "./object-store.js";
import { isSha256Hex } from "./sha256.js";

/** What every content reference starts with: `blob:sha256:<64 lowercase hex>`. */
export const BLOB_REF_PREFIX = "blob:sha256:";

/** What a content store reports about stored content. */
export interface ContentInfo {
  /** SHA-256 of the bytes, 64 lowercase hex: the content's id. */
  hash: string;
  size: number;
}

export interface ContentPutResult extends ContentInfo {
  /** False when the same bytes were already stored. */
  created: boolean;
}

/**
 * A content-addressed store: bytes go in, their SHA-256 comes out, and the same bytes are stored
 * once. The contract between what keeps content (`@stowage/blob-store`'s `BlobStore`) and what
 * refers to it (hot-state's content registry, session entries). Every read is verified: bytes
 * that no longer hash to their id fail with INTEGRITY, never come back as good.
 */
export interface ContentStore {
  put(bytes: Uint8Array, options?: OperationOptions): Promise<ContentPutResult>;
  /** The verified bytes, or `null` when nothing is stored under `hash`. */
  get(hash: string, options?: OperationOptions): Promise<Uint8Array | null>;
  stat(hash: string, options?: OperationOptions): Promise<(ContentInfo & { lastModified: Date }) | null>;
  /** Where the content lives, when its backend has an address (`file://…`, `s3://…`). */
  uriFor?(hash: string): string | undefined;
}

/** The reference to content: `blob:sha256:<64 hex>`. */
export function formatBlobRef(hash: string): string {
  if (!isSha256Hex(hash)) {
    throw new StowageError(
      "INVALID_INPUT",
      `blob hash must be 64 lowercase hex characters, got ${describeValue(hash)}`,
    );
  }
  return BLOB_REF_PREFIX + hash;
}

/**
 * The hash inside a blob reference, or `null` when `value` is not exactly `blob:sha256:` plus 64
 * lowercase hex characters. Strict on purpose: a crafted ref must never reach a file path.
 */
export function parseBlobRef(value: unknown): string | null {
  if (typeof value !== "string" || value.length !== BLOB_REF_PREFIX.length + 64) return null;
  if (!value.startsWith(BLOB_REF_PREFIX)) return null;
  const hash = value.slice(BLOB_REF_PREFIX.length);
  return isSha256Hex(hash) ? hash : null;
}
