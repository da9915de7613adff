import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import { type Env, envString, StowageError } from "@stowage/core";
import type { KeyProvider, KeyWrapContext, WrappedDataKey } from "./key-provider.js";

/** The setting the embedded key provider reads its key-encryption keys from. */
export const ENCRYPTION_KEY_SETTING = "STOWAGE_ENCRYPTION_KEY";

const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const KEY_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

function invalidSetting(message: string): StowageError {
  return new StowageError("INVALID_INPUT", `${ENCRYPTION_KEY_SETTING}: ${message}`, {
    reason: "INVALID_SETTING",
    details: { setting: ENCRYPTION_KEY_SETTING },
  });
}

/**
 * The key-encryption keys of `STOWAGE_ENCRYPTION_KEY`: comma-separated entries, each a base64
 * 32-byte key, optionally named `id:base64`; the first is current. An unnamed key's id is
 * `k` and 12 hex digits of its SHA-256, so the same key always has the same id. A message never
 * repeats a key's bytes, only the entry's position.
 */
export function parseEncryptionKeys(raw: string): { currentId: string; keys: Map<string, Buffer> } {
  const keys = new Map<string, Buffer>();
  const entries = raw.split(",").map((entry) => entry.trim());
  for (const [position, entry] of entries.entries()) {
    const colon = entry.indexOf(":");
    const encoded = colon < 0 ? entry : entry.slice(colon + 1);
    const key = Buffer.from(encoded, "base64");
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || key.byteLength !== KEY_BYTES) {
      throw invalidSetting(
        `entry ${position + 1} must be a base64 32-byte key (\`openssl rand -base64 32\`), optionally as id:key`,
      );
    }
    const id =
      colon < 0 ? `k${createHash("sha256").update(key).digest("hex").slice(0, 12)}` : entry.slice(0, colon);
    if (!KEY_ID.test(id)) {
      throw invalidSetting(
        `entry ${position + 1}'s id must be letters, digits, ".", "_" or "-" (at most 64)`,
      );
    }
    if (keys.has(id)) throw invalidSetting(`entry ${position + 1} repeats the key id ${id}`);
    keys.set(id, key);
  }
  return { currentId: keys.keys().next().value!, keys };
}

function contextBytes(context: KeyWrapContext): Buffer {
  return Buffer.from(`stowage/data-key/v1\0${context.scope}\0${context.dataKeyId}`, "utf8");
}

/**
 * The embedded default {@link KeyProvider}: AES-256-GCM key wrapping under the keys of
 * `STOWAGE_ENCRYPTION_KEY` (see {@link parseEncryptionKeys}); null when the setting is unset.
 */
export function envKeyProvider(env: Env): KeyProvider | null {
  const raw = envString(env, ENCRYPTION_KEY_SETTING);
  if (raw === undefined) return null;
  const { currentId, keys } = parseEncryptionKeys(raw);
  return {
    currentKeyId: async () => currentId,
    async wrap(dataKey, context): Promise<WrappedDataKey> {
      const nonce = randomBytes(NONCE_BYTES);
      const cipher = createCipheriv("aes-256-gcm", keys.get(currentId)!, nonce);
      cipher.setAAD(contextBytes(context));
      const sealed = Buffer.concat([nonce, cipher.update(dataKey), cipher.final(), cipher.getAuthTag()]);
      return { keyId: currentId, wrapped: sealed };
    },
    async unwrap({ keyId, wrapped }, context) {
      const kek = keys.get(keyId);
      if (!kek) {
        throw new StowageError(
          "FORBIDDEN",
          `the data key of ${context.scope} is wrapped by key-encryption key ${keyId}, which ${ENCRYPTION_KEY_SETTING} does not hold`,
          { reason: "ENCRYPTION_KEY_UNKNOWN", details: { keyId, scope: context.scope } },
        );
      }
      try {
        const decipher = createDecipheriv("aes-256-gcm", kek, wrapped.subarray(0, NONCE_BYTES));
        decipher.setAAD(contextBytes(context));
        decipher.setAuthTag(wrapped.subarray(Math.max(NONCE_BYTES, wrapped.byteLength - TAG_BYTES)));
        return Buffer.concat([
          decipher.update(wrapped.subarray(NONCE_BYTES, wrapped.byteLength - TAG_BYTES)),
          decipher.final(),
        ]);
      } catch (err) {
        throw new StowageError(
          "INTEGRITY",
          `the data key of ${context.scope} does not unwrap under key-encryption key ${keyId} (a different key under that id, or a tampered key record)`,
          { reason: "DATA_KEY_UNWRAP_FAILED", details: { keyId, scope: context.scope }, cause: err },
        );
      }
    },
  };
}
