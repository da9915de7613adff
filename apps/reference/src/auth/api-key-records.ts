import { type ObjectStore, StowageError } from "@stowage/core";
import type { ApiKeyRecord, ApiKeyRecordStore } from "@stowage/storage-s3";

interface StoredRecord {
  id: string;
  hash: string;
  principal: ApiKeyRecord["principal"];
  createdAt: string;
  label?: string;
}

/**
 * API-key records as one small object per key (`<id>.json`): issuing a key from the CLI while the
 * server runs needs no read-modify-write of a shared file. Only hashes are stored.
 */
export function createApiKeyRecords(store: ObjectStore): ApiKeyRecordStore {
  const keyOf = (id: string) => `${id}.json`;
  return {
    async get(id, options) {
      const bytes = await store.get(keyOf(id), options);
      if (!bytes) return null;
      let stored: StoredRecord;
      try {
        stored = JSON.parse(new TextDecoder().decode(bytes)) as StoredRecord;
      } catch (err) {
        throw new StowageError("INTEGRITY", `API key record ${id} is not valid JSON`, { cause: err });
      }
      return {
        id: stored.id,
        hash: stored.hash,
        principal: stored.principal,
        createdAt: new Date(stored.createdAt),
        ...(stored.label === undefined ? {} : { label: stored.label }),
      };
    },
    async put(record, options) {
      const stored: StoredRecord = { ...record, createdAt: record.createdAt.toISOString() };
      await store.put(keyOf(record.id), new TextEncoder().encode(JSON.stringify(stored)), {
        ...options,
        ifNoneMatch: "*",
      });
    },
    async delete(id, options) {
      await store.delete(keyOf(id), options);
    },
  };
}
