import { putBackEntryPayloads } from "./entry-payloads.js";
import { readTranscript } from "./read-parts.js";
import { directoryOf, type SessionStoreContext, toStoredKey } from "./session-store-context.js";
import { describeSessionKey, parseStoredEntry } from "./session-store-key.js";
import type { SessionKey, SessionStoreEntry, StoreOperationOptions } from "./types.js";

/**
 * `load(key)`: every entry of the transcript, in order, each checked as it was accepted, with the
 * payloads that moved out put back (from the parts that hold them, or the blob store); null when
 * it has no part.
 */
export async function loadTranscript(
  context: SessionStoreContext,
  key: SessionKey,
  { signal }: StoreOperationOptions = {},
): Promise<SessionStoreEntry[] | null> {
  const stored = toStoredKey(key);
  const read = await readTranscript(context.store, directoryOf(context, stored), 0, signal, parseStoredEntry);
  if (read === null) return null;
  await putBackEntryPayloads(
    context.payloads,
    read.lines,
    read.moved,
    describeSessionKey(stored),
    signal,
    read.held,
  );
  return read.lines;
}
