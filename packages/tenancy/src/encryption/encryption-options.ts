import { type Env, type ObjectStore, type OperationOptions, StowageError } from "@stowage/core";
import { createDataKeys, type DataKeys, type KeyRotationReport } from "./data-keys.js";
import { createEncryptedObjectStore } from "./encrypted-object-store.js";
import { ENCRYPTION_KEY_SETTING, envKeyProvider } from "./env-key-provider.js";
import type { KeyProvider } from "./key-provider.js";

/**
 * Encryption at rest of everything a deployment keeps in its shared store (`createStowage`'s and
 * `createSharedStores`' `encryption`). Off unless given.
 */
export interface EncryptionOptions {
  /** Where the key-encryption keys are (a KMS hook); default the embedded provider over {@link env}. */
  keyProvider?: KeyProvider;
  /**
   * Read `STOWAGE_ENCRYPTION_KEY` from here when no `keyProvider` is given: comma-separated base64
   * 32-byte keys, each optionally `id:key`, the first current. Default `process.env`.
   */
  env?: Env;
}

/** The shared store sealed, its data keys (for what is stored elsewhere), and their rotation. */
export interface SealedShared {
  shared: ObjectStore;
  keys: DataKeys;
  rotate(options?: OperationOptions): Promise<KeyRotationReport>;
}

/**
 * `raw` sealed under data keys kept in `keysPrefix` of `raw` itself, wrapped by the provider:
 * INVALID_INPUT when encryption is asked for and no key is given.
 */
export function sealShared(raw: ObjectStore, keysPrefix: string, options: EncryptionOptions): SealedShared {
  const provider = options.keyProvider ?? envKeyProvider(options.env ?? process.env);
  if (!provider) {
    throw new StowageError(
      "INVALID_INPUT",
      `encryption needs a keyProvider or ${ENCRYPTION_KEY_SETTING} (a base64 32-byte key: \`openssl rand -base64 32\`)`,
      { reason: "ENCRYPTION_KEY_MISSING" },
    );
  }
  const keys = createDataKeys(raw, keysPrefix, provider);
  return { shared: createEncryptedObjectStore(raw, keys), keys, rotate: keys.rotate };
}
