import { assertPrincipal, describeValue, isSha256Hex, type ObjectStore, StowageError } from "@stowage/core";
import type { ApiKeyRecord, ApiKeyRecordStore } from "./api-keys.js";

interface StoredRecord {
  id: string;
  hash: string;
  principal: ApiKeyRecord["principal"];
  createdAt: string;
  label?: string;
}

/** Options of {@link createApiKeyRecords}. */
export interface ApiKeyRecordsOptions {
  /** The store every process shares. */
  store: ObjectStore;
  /** Key prefix of the records. */
  prefix: string;
}

function corrupt(id: string, problem: string, cause?: unknown): StowageError {
  return new StowageError("INTEGRITY", `API key record ${id} ${problem}`, {
    reason: "CORRUPT_KEY_RECORD",
    ...(cause === undefined ? {} : { cause }),
  });
}

/**
 * A stored record as it may be trusted, or INTEGRITY (reason `CORRUPT_KEY_RECORD`): the record
 * decides who a request acts as, so a record edited in the store (another id's, a principal that
 * is no safe id, no SHA-256) never yields a principal.
 */
function parseRecord(id: string, bytes: Uint8Array): ApiKeyRecord {
  let stored: Partial<StoredRecord>;
  try {
    stored = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes)) as Partial<StoredRecord>;
  } catch (err) {
    throw corrupt(id, "is not valid JSON", err);
  }
  if (typeof stored !== "object" || stored === null) throw corrupt(id, "is not a JSON object");
  if (stored.id !== id) throw corrupt(id, `holds the id ${describeValue(stored.id)}`);
  if (!isSha256Hex(stored.hash)) throw corrupt(id, "has no SHA-256 hash");
  try {
    assertPrincipal(stored.principal);
  } catch (err) {
    throw corrupt(id, "has no valid principal", err);
  }
  const createdAt = new Date(stored.createdAt as string);
  if (typeof stored.createdAt !== "string" || Number.isNaN(createdAt.getTime())) {
    throw corrupt(id, "has no valid createdAt");
  }
  if (stored.label !== undefined && typeof stored.label !== "string")
    throw corrupt(id, "has a label that is not a string");
  return {
    id,
    hash: stored.hash,
    principal: { kind: stored.principal.kind, id: stored.principal.id },
    createdAt,
    ...(stored.label === undefined ? {} : { label: stored.label }),
  };
}

/**
 * API-key records as one small object per key (`<prefix><id>.json`) in the store every process
 * shares: a key issued by one process (or the CLI) is valid on every other, and issuing one needs
 * no read-modify-write of a shared file. Only hashes are stored; every record is checked when read.
 */
export function createApiKeyRecords(options: ApiKeyRecordsOptions): ApiKeyRecordStore {
  const { store, prefix } = options;
  const keyOf = (id: string) => `${prefix}${id}.json`;
  return {
    async get(id, operation) {
      const bytes = await store.get(keyOf(id), operation);
      return bytes ? parseRecord(id, bytes) : null;
    },
    async put(record, operation) {
      const stored: StoredRecord = { ...record, createdAt: record.createdAt.toISOString() };
      await store.put(keyOf(record.id), new TextEncoder().encode(JSON.stringify(stored)), {
        ...operation,
        ifNoneMatch: "*",
      });
    },
    async delete(id, operation) {
      await store.delete(keyOf(id), operation);
    },
  };
}
