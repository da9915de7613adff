import { readTranscript } from "./read-parts.js";
import { directoryOf, type SessionStoreContext, toStoredKey } from "./session-store-context.js";
import { parseStoredEntry } from "./session-store-key.js";
import type { SessionKey, SessionStoreEntry, StoreOperationOptions } from "./types.js";

/** `load(key)`: every entry of the transcript, in order, each checked as it was accepted; null when it has no part. */
export async function loadTranscript(
  context: SessionStoreContext,
  key: SessionKey,
  { signal }: StoreOperationOptions = {},
): Promise<SessionStoreEntry[] | null> {
  const stored = toStoredKey(key);
  const read = await readTranscript(context.store, directoryOf(context, stored), 0, signal, parseStoredEntry);
  return read === null ? null : read.lines;
}
