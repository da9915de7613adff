import type { OperationOptions } from "@stowage/core";

/**
 * What a data key is wrapped for, bound into the wrapping (a KMS's encryption context): a key
 * record copied to another principal's namespace, or renamed, no longer unwraps.
 */
export interface KeyWrapContext {
  /** Whose data key: `user/alice`, `org/acme`, or `deployment` (the blobs every principal shares). */
  scope: string;
  /** The data key's hex id. */
  dataKeyId: string;
}

/** A data key wrapped by a key-encryption key. */
export interface WrappedDataKey {
  /** The key-encryption key it was wrapped with. */
  keyId: string;
  wrapped: Uint8Array;
}

/**
 * Where a deployment's key-encryption keys live: the environment (`STOWAGE_ENCRYPTION_KEY`, the
 * default) or a KMS behind these three calls. Data keys never leave the process unwrapped, and the
 * key-encryption key never leaves the provider.
 */
export interface KeyProvider {
  /** The key-encryption key that `wrap` uses now: records wrapped under another are re-wrapped by rotation. */
  currentKeyId(options?: OperationOptions): Promise<string>;
  /** `dataKey` wrapped under the current key-encryption key, bound to `context`. */
  wrap(dataKey: Uint8Array, context: KeyWrapContext, options?: OperationOptions): Promise<WrappedDataKey>;
  /**
   * The data key back. FORBIDDEN (`ENCRYPTION_KEY_UNKNOWN`) when the provider no longer has
   * `keyId`; INTEGRITY when the wrapping does not authenticate (a wrong key under that id, a
   * tampered record, another context).
   */
  unwrap(wrapped: WrappedDataKey, context: KeyWrapContext, options?: OperationOptions): Promise<Uint8Array>;
}
