import { randomBytes } from "node:crypto";
import { type ObjectStore, type OperationOptions, StowageError } from "@stowage/core";
import type { KeyProvider } from "./key-provider.js";
import {
  type KeyRecord,
  type KeyRecords,
  RECORD_NAME,
  readKeyRecord,
  unwrapKeyRecord,
  writeKeyRecord,
} from "./key-records.js";
import type { DataKey } from "./sealed-body.js";
import { DATA_KEY_ID_BYTES } from "./sealed-format.js";

/** What a rotation did: records re-wrapped under the current key, and those already under it. */
export interface KeyRotationReport {
  keyId: string;
  rewrapped: number;
  alreadyCurrent: number;
}

const DATA_KEY_BYTES = 32;

/**
 * The data keys of a deployment, one per scope (a principal, or the deployment's shared blobs),
 * each in a key record `<prefix><scope>/<data key id>.json` wrapped by the provider's key. Content
 * names its data key by id, so rotating the key-encryption key rewrites these records only.
 *
 * Two processes may create a scope's first key at once: each writes its own record (ids are
 * random, so neither overwrites the other) and then takes the smallest id listed. Both records
 * stay, so whatever either sealed meanwhile stays readable.
 */
export function createDataKeys(store: ObjectStore, prefix: string, provider: KeyProvider) {
  const current = new Map<string, Promise<DataKey>>();
  const byId = new Map<string, Promise<Uint8Array>>();

  const records: KeyRecords = { store, prefix, provider };
  const readRecord = (scope: string, dataKeyId: string, options: OperationOptions) =>
    readKeyRecord(records, scope, dataKeyId, options);
  const unwrapRecord = (record: KeyRecord, options: OperationOptions) =>
    unwrapKeyRecord(records, record, options);
  const writeRecord = (
    scope: string,
    dataKeyId: string,
    dataKey: Uint8Array,
    createdAt: string,
    options: OperationOptions,
  ) => writeKeyRecord(records, { scope, dataKeyId, dataKey, createdAt }, options);

  function remembered<T>(cache: Map<string, Promise<T>>, name: string, load: () => Promise<T>): Promise<T> {
    const known = cache.get(name);
    if (known) return known;
    const loading = load();
    cache.set(name, loading);
    // A failure (a store down, a provider without the key) is not remembered: the next read retries.
    loading.catch(() => cache.delete(name));
    return loading;
  }

  async function smallestId(scope: string, options: OperationOptions): Promise<string | undefined> {
    const page = await store.list({ prefix: `${prefix}${scope}/`, limit: 1, ...options });
    const name = page.items[0]?.key.slice(`${prefix}${scope}/`.length);
    return name === undefined ? undefined : RECORD_NAME.exec(name)?.[1];
  }

  async function loadCurrent(scope: string, options: OperationOptions): Promise<DataKey> {
    let id = await smallestId(scope, options);
    if (id === undefined) {
      const fresh = Buffer.from(randomBytes(DATA_KEY_BYTES));
      const freshId = randomBytes(DATA_KEY_ID_BYTES).toString("hex");
      await writeRecord(scope, freshId, fresh, new Date().toISOString(), options);
      id = (await smallestId(scope, options)) ?? freshId;
      if (id === freshId) {
        byId.set(`${scope}/${id}`, Promise.resolve(fresh));
        return { id, key: fresh };
      }
    }
    return { id, key: await dataKey(scope, id, options) };
  }

  function dataKey(scope: string, dataKeyId: string, options: OperationOptions = {}): Promise<Uint8Array> {
    return remembered(byId, `${scope}/${dataKeyId}`, async () => {
      const record = await readRecord(scope, dataKeyId, options);
      if (record === null) {
        throw new StowageError(
          "FORBIDDEN",
          `no data key ${dataKeyId} in ${scope}: the object was sealed under a key this deployment does not hold`,
          { reason: "DATA_KEY_MISSING", details: { scope, dataKeyId } },
        );
      }
      return unwrapRecord(record, options);
    });
  }

  return {
    /** The data key new objects of `scope` are sealed under; made on the scope's first write. */
    current: (scope: string, options: OperationOptions = {}) =>
      remembered(current, scope, () => loadCurrent(scope, options)),
    /** The data key `dataKeyId` of `scope` (FORBIDDEN when there is no such record). */
    dataKey,
    /**
     * Re-wraps every key record not under the provider's current key-encryption key. Content is
     * not touched: it names its data key, which keeps its bytes. Safe to run again or in two
     * processes at once (both write the same key, wrapped afresh).
     */
    async rotate(options: OperationOptions = {}): Promise<KeyRotationReport> {
      const keyId = await provider.currentKeyId(options);
      const report: KeyRotationReport = { keyId, rewrapped: 0, alreadyCurrent: 0 };
      for await (const item of store.iterate({ prefix, ...options })) {
        const rest = item.key.slice(prefix.length);
        const slash = rest.lastIndexOf("/");
        const match = RECORD_NAME.exec(rest.slice(slash + 1));
        if (slash < 0 || !match) continue;
        const record = await readRecord(rest.slice(0, slash), match[1]!, options);
        if (record === null) continue;
        if (record.keyId === keyId) {
          report.alreadyCurrent++;
          continue;
        }
        await writeRecord(
          record.scope,
          record.dataKeyId,
          await unwrapRecord(record, options),
          record.createdAt,
          options,
        );
        report.rewrapped++;
      }
      return report;
    },
  };
}

/** A deployment's data keys; see {@link createDataKeys}. */
export type DataKeys = ReturnType<typeof createDataKeys>;
