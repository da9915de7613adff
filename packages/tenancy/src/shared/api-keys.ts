import { randomBytes, timingSafeEqual } from "node:crypto";
import {
  assertPrincipal,
  describeValue,
  isSha256Hex,
  type OperationOptions,
  type Principal,
  StowageError,
  sha256Hex,
  throwIfAborted,
} from "@stowage/core";

/** What every key issued here starts with, so that leaked keys are easy to scan for. */
const DEFAULT_API_KEY_PREFIX = "stw";
/** Random bytes in a key's secret part (256 bits). */
const API_KEY_SECRET_BYTES = 32;
/** Random bytes in a key's id part, the public half used to find its record. */
const API_KEY_ID_BYTES = 9;
/** Longest key accepted before any work is done. */
const MAX_API_KEY_LENGTH = 256;

/** What is stored for a key: never the key itself, only its SHA-256. */
export interface ApiKeyRecord {
  /** The public id embedded in the key; the lookup handle. */
  id: string;
  /** Hex SHA-256 of the whole key. */
  hash: string;
  principal: Principal;
  createdAt: Date;
  label?: string;
}

/** Where key records live (a table in the app); the memory one is for tests and single processes. */
export interface ApiKeyRecordStore {
  get(id: string, options?: OperationOptions): Promise<ApiKeyRecord | null>;
  put(record: ApiKeyRecord, options?: OperationOptions): Promise<void>;
  delete(id: string, options?: OperationOptions): Promise<void>;
}

/** Key records in this process's memory: for tests and single-process servers. */
export function createMemoryApiKeyRecordStore(): ApiKeyRecordStore {
  const records = new Map<string, ApiKeyRecord>();
  return {
    async get(id) {
      const record = records.get(id);
      return record ? structuredClone(record) : null;
    },
    async put(record) {
      records.set(record.id, structuredClone(record));
    },
    async delete(id) {
      records.delete(id);
    },
  };
}

/** Options of {@link createApiKeys}. */
export interface ApiKeysOptions {
  /** Default: an in-memory store. */
  records?: ApiKeyRecordStore;
  /** Letters (and digits) every key starts with; default `"stw"`. */
  prefix?: string;
}

/** What {@link ApiKeys.issue} returns. */
export interface IssuedApiKey {
  /** The key: show it once, store only `record`. */
  apiKey: string;
  record: ApiKeyRecord;
}

/** A key that {@link ApiKeys.verify} accepted. */
export interface VerifiedApiKey {
  /**
   * The key's public id (its record's `id`): what a rate limiter or an audit log keys by,
   * never the secret or a piece of it.
   */
  keyId: string;
  principal: Principal;
}

/** Issues, checks and revokes API keys; see {@link createApiKeys}. */
export interface ApiKeys {
  issue(principal: Principal, options?: { label?: string; signal?: AbortSignal }): Promise<IssuedApiKey>;
  /**
   * The id and principal of a valid key; null for a missing, malformed, unknown or revoked key
   * (so a `Headers.get()` result may be passed as it is). Constant-time compare.
   */
  verify(apiKey: string | null | undefined, options?: OperationOptions): Promise<VerifiedApiKey | null>;
  /** The principal of a valid key, as {@link ApiKeys.verify} decides; null otherwise. */
  authenticate(apiKey: string | null | undefined, options?: OperationOptions): Promise<Principal | null>;
  revoke(id: string, options?: OperationOptions): Promise<void>;
}

/** Hex SHA-256 of an API key. A fast hash is enough: keys carry 256 random bits, nothing to guess. */
export function hashApiKey(apiKey: string): string {
  return sha256Hex(apiKey);
}

const base64url = (bytes: number) => randomBytes(bytes).toString("base64url");
// A hash compared against when no record exists, so unknown ids cost the same as wrong secrets.
const DECOY_HASH = Buffer.alloc(32);

/**
 * Issues and checks API keys of the form `<prefix>_<id>_<secret>`. Only the SHA-256 of a key is
 * stored; checks look the record up by the public id and compare hashes in constant time.
 */
export function createApiKeys(options: ApiKeysOptions = {}): ApiKeys {
  const records = options.records ?? createMemoryApiKeyRecordStore();
  const prefix = options.prefix ?? DEFAULT_API_KEY_PREFIX;
  if (typeof prefix !== "string" || !/^[A-Za-z][A-Za-z0-9]{0,15}$/.test(prefix)) {
    throw new StowageError(
      "INVALID_INPUT",
      `createApiKeys: prefix must be 1 to 16 letters or digits starting with a letter, got ${describeValue(prefix)}`,
    );
  }
  const keyPattern = new RegExp(`^${prefix}_([A-Za-z0-9_-]{12})_([A-Za-z0-9_-]{43})$`);

  async function verify(apiKey: unknown, options: OperationOptions = {}): Promise<VerifiedApiKey | null> {
    if (typeof apiKey !== "string" || apiKey.length > MAX_API_KEY_LENGTH) return null;
    const match = keyPattern.exec(apiKey);
    if (!match) return null;
    const record = await records.get(match[1]!, options);
    const expected = record && isSha256Hex(record.hash) ? Buffer.from(record.hash, "hex") : DECOY_HASH;
    const actual = Buffer.from(hashApiKey(apiKey), "hex");
    const equal = timingSafeEqual(actual, expected);
    if (!equal || !record) return null;
    return { keyId: record.id, principal: { kind: record.principal.kind, id: record.principal.id } };
  }

  return {
    async issue(principal, issueOptions = {}) {
      assertPrincipal(principal);
      const { label, signal } = issueOptions;
      if (label !== undefined && (typeof label !== "string" || label.length > 200)) {
        throw new StowageError(
          "INVALID_INPUT",
          `label must be a string of at most 200 characters, got ${describeValue(label)}`,
        );
      }
      throwIfAborted(signal, "issue API key");
      const id = base64url(API_KEY_ID_BYTES);
      const apiKey = `${prefix}_${id}_${base64url(API_KEY_SECRET_BYTES)}`;
      const record: ApiKeyRecord = {
        id,
        hash: hashApiKey(apiKey),
        principal: { kind: principal.kind, id: principal.id },
        createdAt: new Date(),
        ...(label === undefined ? {} : { label }),
      };
      await records.put(record, { signal });
      return { apiKey, record };
    },

    verify,

    async authenticate(apiKey, authOptions = {}) {
      return (await verify(apiKey, authOptions))?.principal ?? null;
    },

    async revoke(id, revokeOptions = {}) {
      if (typeof id !== "string" || id.length === 0) {
        throw new StowageError(
          "INVALID_INPUT",
          `API key id must be a non-empty string, got ${describeValue(id)}`,
        );
      }
      await records.delete(id, revokeOptions);
    },
  };
}
