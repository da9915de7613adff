import { assertKeyDirectoryPrefix, describeValue, StowageError } from "@stowage/core";

/**
 * How hashes map to keys. `flat`: `<sha256>`, the common on-disk layout `<blobsDir>/<sha256>`.
 * `sharded`: `<first 2 hex>/<sha256>`, which keeps directories small on file systems.
 */
export type BlobLayout = "flat" | "sharded";

/** Sub-prefix for streamed puts whose hash is not known yet. */
export const STAGING_SEGMENT = ".staging";
/** Sub-prefix where garbage collection moves a candidate aside before it decides to delete it. */
export const GC_ASIDE_SEGMENT = ".gc";
/**
 * Sub-prefix where a collection given `trashMs` keeps what it took (`<prefix>.gc-trash/<hash>`,
 * stamped when it went there) until a later collection purges it; `restoreCollected` brings one back.
 */
export const GC_TRASH_SEGMENT = ".gc-trash";
/**
 * Sub-prefix of the empty objects a `put` writes on stores whose `move` restamps (S3): one per
 * hash, rewritten by every put, so that a collection sees a put its timestamps cannot show.
 */
export const TOUCH_RECORD_SEGMENT = ".touched";

const FLAT_KEY = /^[a-f0-9]{64}$/;
const SHARDED_KEY = /^([a-f0-9]{2})\/([a-f0-9]{64})$/;

/** The keys of one layout under one prefix: blobs, staging objects and blobs set aside by a collection. */
export function createBlobKeys(layout: BlobLayout, prefix: string) {
  if (layout !== "flat" && layout !== "sharded") {
    throw new StowageError(
      "INVALID_INPUT",
      `layout must be "flat" or "sharded", got ${describeValue(layout)}`,
    );
  }
  assertKeyDirectoryPrefix(prefix);

  return {
    keyFor(hash: string): string {
      return layout === "flat" ? prefix + hash : `${prefix}${hash.slice(0, 2)}/${hash}`;
    },
    /** The hash a key stores, or `null` for keys that are not blobs of this layout. */
    hashFromKey(key: string): string | null {
      if (!key.startsWith(prefix)) return null;
      const rest = key.slice(prefix.length);
      if (layout === "flat") return FLAT_KEY.test(rest) ? rest : null;
      const match = SHARDED_KEY.exec(rest);
      return match && match[2]!.startsWith(match[1]!) ? match[2]! : null;
    },
    stagingPrefix: `${prefix}${STAGING_SEGMENT}/`,
    asidePrefix: `${prefix}${GC_ASIDE_SEGMENT}/`,
    trashPrefix: `${prefix}${GC_TRASH_SEGMENT}/`,
    touchRecordPrefix: `${prefix}${TOUCH_RECORD_SEGMENT}/`,
  };
}
