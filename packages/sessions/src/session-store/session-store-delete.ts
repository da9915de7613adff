import { mapConcurrent } from "@stowage/core";
import { listParts, READ_CONCURRENCY } from "./read-parts.js";
import {
  directoryOf,
  forget,
  type SessionStoreContext,
  serialize,
  toStoredKey,
} from "./session-store-context.js";
import type { SessionKey, StoreOperationOptions } from "./types.js";

/**
 * `delete(key)`: a main transcript with its subkeys (subagent transcripts), a subpath only itself
 * (not the subpaths below it).
 */
export async function deleteTranscript(
  context: SessionStoreContext,
  key: SessionKey,
  { signal }: StoreOperationOptions = {},
): Promise<void> {
  const { store } = context;
  const stored = toStoredKey(key);
  const directory = directoryOf(context, stored);
  await serialize(context, directory, async () => {
    const keys: string[] = [];
    if (stored.subpath === "") {
      for await (const item of store.iterate({ prefix: directory, signal })) keys.push(item.key);
    } else {
      for (const part of await listParts(store, directory, signal)) keys.push(part.key);
    }
    await mapConcurrent(keys, READ_CONCURRENCY, (objectKey) => store.delete(objectKey, { signal }), signal);
    forget(context, directory);
  });
}
