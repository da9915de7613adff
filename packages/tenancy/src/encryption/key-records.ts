import { type ObjectStore, type OperationOptions, StowageError } from "@stowage/core";
import type { KeyProvider } from "./key-provider.js";

/** A key record as stored: one data key of one scope, wrapped. Never the key in clear. */
export interface KeyRecord {
  format: 1;
  scope: string;
  dataKeyId: string;
  /** The key-encryption key that wraps it (the provider's id). */
  keyId: string;
  /** Base64. */
  wrapped: string;
  createdAt: string;
}

/** Where a deployment's key records are (`<prefix><scope>/<data key id>.json`), and what wraps them. */
export interface KeyRecords {
  store: ObjectStore;
  prefix: string;
  provider: KeyProvider;
}

/** A record's name: its data key's 16-byte id in hex. */
export const RECORD_NAME = /^([a-f0-9]{32})\.json$/;

const recordKey = ({ prefix }: KeyRecords, scope: string, dataKeyId: string) =>
  `${prefix}${scope}/${dataKeyId}.json`;

/** The record of `dataKeyId` in `scope`, or null; INTEGRITY when it is not one or names another key. */
export async function readKeyRecord(
  records: KeyRecords,
  scope: string,
  dataKeyId: string,
  options: OperationOptions,
): Promise<KeyRecord | null> {
  const bytes = await records.store.get(recordKey(records, scope, dataKeyId), options);
  if (bytes === null) return null;
  let record: KeyRecord;
  try {
    record = JSON.parse(Buffer.from(bytes).toString("utf8")) as KeyRecord;
  } catch (err) {
    throw new StowageError("INTEGRITY", `the key record of data key ${dataKeyId} (${scope}) is not JSON`, {
      reason: "DATA_KEY_RECORD_INVALID",
      cause: err,
    });
  }
  // A record copied to another name would otherwise be read as that key's (its wrapping is bound
  // to its own scope and id, so it would not unwrap either, but this says why).
  if (record.scope !== scope || record.dataKeyId !== dataKeyId || typeof record.wrapped !== "string") {
    throw new StowageError(
      "INTEGRITY",
      `the key record of data key ${dataKeyId} (${scope}) does not name itself`,
      {
        reason: "DATA_KEY_RECORD_INVALID",
      },
    );
  }
  return record;
}

/** The data key a record wraps, through the provider (FORBIDDEN, INTEGRITY: see `KeyProvider.unwrap`). */
export function unwrapKeyRecord(
  { provider }: KeyRecords,
  record: KeyRecord,
  options: OperationOptions,
): Promise<Uint8Array> {
  return provider.unwrap(
    { keyId: record.keyId, wrapped: Buffer.from(record.wrapped, "base64") },
    { scope: record.scope, dataKeyId: record.dataKeyId },
    options,
  );
}

/** Writes `dataKey`'s record, wrapped under the provider's current key (a rotation overwrites in place). */
export async function writeKeyRecord(
  records: KeyRecords,
  key: { scope: string; dataKeyId: string; dataKey: Uint8Array; createdAt: string },
  options: OperationOptions,
): Promise<void> {
  const { scope, dataKeyId } = key;
  const { keyId, wrapped } = await records.provider.wrap(key.dataKey, { scope, dataKeyId }, options);
  const record: KeyRecord = {
    format: 1,
    scope,
    dataKeyId,
    keyId,
    wrapped: Buffer.from(wrapped).toString("base64"),
    createdAt: key.createdAt,
  };
  await records.store.put(recordKey(records, scope, dataKeyId), Buffer.from(JSON.stringify(record)), {
    ...options,
    contentType: "application/json",
  });
}
