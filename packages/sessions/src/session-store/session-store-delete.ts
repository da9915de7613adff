import { mapConcurrent, trashDaysOf } from "@stowage/core";
import { listParts, READ_CONCURRENCY } from "./read-parts.js";
import {
  directoryOf,
  forget,
  type SessionStoreContext,
  serialize,
  toStoredKey,
} from "./session-store-context.js";
import { type TranscriptObject, trashTranscript } from "./session-store-trash.js";
import type { SessionKey, SessionStoreDeleteOptions } from "./types.js";

/**
 * `delete(key)`: a main transcript with its subkeys (subagent transcripts), a subpath only itself
 * (not the subpaths below it). Into the store's trash for `trashDays` (the call's, else the
 * store's), or, with 0, deleted at once.
 */
export async function deleteTranscript(
  context: SessionStoreContext,
  key: SessionKey,
  { signal, trashDays }: SessionStoreDeleteOptions = {},
): Promise<void> {
  const { store } = context;
  const stored = toStoredKey(key);
  const days = trashDaysOf(trashDays, context.trashDays);
  const directory = directoryOf(context, stored);
  await serialize(context, directory, async () => {
    const objects: TranscriptObject[] = [];
    if (stored.subpath === "") {
      for await (const item of store.iterate({ prefix: directory, signal })) objects.push(item);
    } else {
      for (const part of await listParts(store, directory, signal)) objects.push(part);
    }
    if (objects.length > 0 && days > 0) {
      await trashTranscript(context, stored, objects, days, signal);
    } else {
      await mapConcurrent(
        objects,
        READ_CONCURRENCY,
        (object) => store.delete(object.key, { signal }),
        signal,
      );
    }
    forget(context, directory);
  });
}
