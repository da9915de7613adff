import { mapConcurrent } from "@stowage/core";
import { storePayloads } from "./entry-payloads.js";
import { encodePart, type HeldBytes, partName } from "./part-object.js";
import { listParts, READ_CONCURRENCY, readTranscript } from "./read-parts.js";
import {
  directoryOf,
  forget,
  isAlreadyExists,
  noOwnLines,
  type OwnLines,
  type SessionStoreContext,
  serialize,
  type TranscriptState,
  toStoredKey,
} from "./session-store-context.js";
import { parseStoredEntry } from "./session-store-key.js";
import type { SessionKey, SessionSummaryEntry, StoreOperationOptions } from "./types.js";

/** A stored entry line checked, kept as its text: a compaction must not copy a corrupt line into a range. */
const checkedLine = (line: string): string => {
  parseStoredEntry(line);
  return line;
};

/**
 * Writes one range part for sequences `first..last` and empties every part it replaces. The
 * payloads the replaced parts held go to the blob store first, when the store has one: the range
 * holds only refs (what an append saved in requests, a compaction pays once). Until the range is
 * written the parts still hold them, and their refs keep the new blobs from garbage collection.
 */
async function writeRange(
  { store, payloads }: SessionStoreContext,
  directory: string,
  first: number,
  last: number,
  body: OwnLines & { summary: SessionSummaryEntry | undefined },
  signal: AbortSignal | undefined,
): Promise<void> {
  const rangeKey = directory + partName(first, last);
  let held: HeldBytes = body.held;
  if (payloads && held.size > 0) {
    await storePayloads(payloads.blobs, held, signal);
    held = new Map();
  }
  try {
    await store.put(rangeKey, encodePart(rangeKey, { ...body, held }, body.lines), {
      ifNoneMatch: "*",
      signal,
    });
  } catch (err) {
    // Another compaction of the same parts got there first: its range holds the same entries.
    if (!isAlreadyExists(err)) throw err;
  }
  // Only now are the replaced parts emptied: a reader always finds the entries somewhere.
  const replaced = (await listParts(store, directory, signal)).filter(
    (part) => part.first >= first && part.last <= last && part.key !== rangeKey && part.size > 0,
  );
  await mapConcurrent(
    replaced,
    READ_CONCURRENCY,
    async (part) => {
      const { created } = await store.put(part.key, new Uint8Array(0), { signal });
      // A delete from another process removed the part since it was listed: an empty part where
      // there was none would read as entries lost, so it goes too.
      if (created) await store.delete(part.key, { signal });
    },
    signal,
  );
}

/** True when every sequence `first..last` is still a non-empty single part. */
async function singlesStored(
  { store }: SessionStoreContext,
  directory: string,
  first: number,
  last: number,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  const live = new Set<number>();
  for (const part of await listParts(store, directory, signal))
    if (part.first === part.last && part.size > 0) live.add(part.first);
  for (let seq = first; seq <= last; seq++) if (!live.has(seq)) return false;
  return true;
}

/**
 * Merges the single parts after the transcript's last range into one range (an append's
 * `compactAfterParts`), from the lines this process wrote itself when no other writer came
 * between and its parts are all still listed, else from what is stored.
 */
export async function compactTail(
  context: SessionStoreContext,
  directory: string,
  state: TranscriptState,
  signal: AbortSignal | undefined,
): Promise<void> {
  const first = state.rangeEnd + 1;
  const last = state.lastSeq;
  if (last <= first) return;
  let body =
    state.own && state.own.counts.length === last - first + 1
      ? { ...state.own, summary: state.summary }
      : undefined;
  // The lines this process wrote are only the tail while its parts are still there: after a
  // delete by another process, a range made of them would bring the deleted entries back.
  if (body && !(await singlesStored(context, directory, first, last, signal))) body = undefined;
  if (!body) {
    const read = await readTranscript(context.store, directory, state.rangeEnd, signal, checkedLine);
    if (read === null || read.firstSeq !== first || read.lastSeq !== last) return; // changed: next time
    body = {
      lines: read.lines,
      counts: read.counts,
      summary: read.summary,
      moved: read.moved,
      held: read.held,
    };
  }
  await writeRange(context, directory, first, last, body, signal);
  state.rangeEnd = last;
  state.singles = 0;
  state.own = noOwnLines();
}

/** `compact(key)`: the whole transcript merged into one range part, the parts it replaced emptied. */
export async function compactTranscript(
  context: SessionStoreContext,
  key: SessionKey,
  { signal }: StoreOperationOptions = {},
): Promise<void> {
  const directory = directoryOf(context, toStoredKey(key));
  await serialize(context, directory, async () => {
    const read = await readTranscript(context.store, directory, 0, signal, checkedLine);
    if (read === null || read.parts.filter((part) => part.size > 0).length <= 1) return;
    await writeRange(context, directory, read.firstSeq, read.lastSeq, read, signal);
    forget(context, directory);
  });
}
