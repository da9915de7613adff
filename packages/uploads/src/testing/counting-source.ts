import type { ObjectStore, OperationOptions } from "@stowage/core";
import { type QuotaUsageSource, usageSourceFromStore } from "../quota-ledger.js";

/** A usage source over `store` that counts its listings and HEADs. */
export interface CountingSource extends QuotaUsageSource {
  lists: number;
  heads: number;
}

/** The store's own source ({@link usageSourceFromStore}), with every call counted. */
export function countingSource(store: ObjectStore): CountingSource {
  const inner = usageSourceFromStore(store);
  const source: CountingSource = {
    lists: 0,
    heads: 0,
    list(prefix: string, options: OperationOptions) {
      source.lists++;
      return inner.list(prefix, options);
    },
    head(key: string, options: OperationOptions) {
      source.heads++;
      return inner.head(key, options);
    },
  };
  return source;
}
