import { type ContentStore, StowageError } from "@stowage/core";
import { readSessionFiles, type SessionBlobFormat, type SessionBlobRecord } from "@stowage/sessions";
import {
  convertStoredTranscript,
  isTranscriptInput,
  type StoredTranscript,
  type TranscriptFile,
  transcriptFiles,
} from "@stowage/tenancy";
import { type FoldedThreadEntry, fitToBudget, type ThreadItem } from "@stowage/thread-items";
import { LRUCache } from "lru-cache";

/** What the viewer shows first of a stored session: its record, its files and its transcripts. */
export interface StoredSessionOutline {
  sessionId: string;
  requestId: string;
  agentType: string;
  codec: string;
  format: SessionBlobFormat;
  rawSizeBytes: number;
  blobSizeBytes: number;
  /** What storing it added: a capture kept as chunks counts only the chunks new to its owner. */
  storedBytes: number;
  createdAt: Date;
  expiresAt: Date | null;
  /** Every file the session holds, in the order it was captured: what can be downloaded. */
  files: { path: string; size: number }[];
  /** The files read as threads, the main transcript first (none for an OpenCode export). */
  transcripts: TranscriptFile[];
}

/** One page of a transcript's entries, each item fitted to the page's budget. */
export interface TranscriptPage {
  path: string;
  entries: FoldedThreadEntry[];
  /** Entries in the whole transcript. */
  total: number;
  /** Pass it back for the next page; absent on the last one. */
  cursor?: string;
  /** Lines of the transcript that could not be read (skipped), at most the first 20. */
  problems: { line: number; message: string }[];
  problemCount: number;
}

/**
 * A stored session as a route found it: the caller's record, and the caller's blob store, where a
 * capture kept as chunks has its chunks and payloads (another owner's are not there to read).
 */
export interface StoredSession {
  record: SessionBlobRecord;
  blobs: ContentStore;
}

interface OpenedStoredSession {
  outline: StoredSessionOutline;
  /** The bytes of the transcripts and their meta files (nothing else is kept). */
  files: Map<string, Uint8Array>;
  conversions: Map<string, Promise<StoredTranscript>>;
}

/** Stored sessions kept open (read and converted) between a viewer's pages: about 3× their transcripts' bytes each. */
const CACHE_BYTES = 128 * 1024 * 1024;
/** How long an open stored session is kept after it was last read. */
const CACHE_TTL_MS = 10 * 60 * 1000;
/** Entries per page unless the caller asks for fewer (at most {@link MAX_PAGE_ENTRIES}). */
const DEFAULT_PAGE_ENTRIES = 100;
const MAX_PAGE_ENTRIES = 1000;
/** A page stops once its items reach this many UTF-8 bytes (it always holds one entry). */
const PAGE_BYTES = 1024 * 1024;
/**
 * Largest item a page carries; a larger one is cut (its full payload is one request away). The
 * viewer folds a tool's input and output, so a page need not carry a whole file a tool read.
 */
const PAGE_ITEM_BYTES = 32 * 1024;

/** The cursor of a page: the stored record it reads (a newer one makes it stale) and the next entry. */
function parseCursor(cursor: string | undefined, recordId: number): number {
  if (cursor === undefined) return 0;
  const match = /^(\d{1,15}):(\d{1,15})$/.exec(cursor);
  if (!match)
    throw new StowageError("INVALID_INPUT", `cursor must be what a page gave, got ${JSON.stringify(cursor)}`);
  if (Number(match[1]) !== recordId) {
    throw new StowageError(
      "CONFLICT",
      "the stored session was stored again since this page was read: start over",
      {
        reason: "STORED_SESSION_CHANGED",
      },
    );
  }
  return Number(match[2]);
}

/** The item as the page carries it: cut to {@link PAGE_ITEM_BYTES}, its full payload at `…/item`. */
function fitted(item: ThreadItem | undefined, path: string): ThreadItem | undefined {
  if (item === undefined) return undefined;
  try {
    return fitToBudget(item, { budgetBytes: PAGE_ITEM_BYTES, localLogPath: path });
  } catch (err) {
    if (!StowageError.is(err, "TOO_LARGE")) return item;
    return {
      id: item.id,
      content: [{ type: "text", text: "[this item is too large to show in a page: open its full payload]" }],
      metadata: { type: "status", status: "too_large", truncated: true },
    } as ThreadItem;
  }
}

function fittedEntry(entry: FoldedThreadEntry, path: string): FoldedThreadEntry {
  if (entry.kind === "item") return { kind: "item", item: fitted(entry.item, path)! };
  return {
    ...entry,
    call: fitted(entry.call, path) as typeof entry.call,
    result: fitted(entry.result, path) as typeof entry.result,
  };
}

/**
 * Opens stored sessions for reading as threads: the record's files read once (with every check a
 * restore makes), each transcript converted once on first use, kept in memory for the next pages
 * within a bound ({@link CACHE_BYTES}). Everything is looked up by the record, which the caller's
 * tenant found: nothing here reaches another principal's sessions.
 */
export function createStoredSessionReader() {
  // Each entry is counted at 1 byte while it loads, then at about 3× its transcripts' bytes.
  const cache = new LRUCache<string, Promise<OpenedStoredSession>>({
    maxSize: CACHE_BYTES,
    ttl: CACHE_TTL_MS,
    updateAgeOnGet: true,
  });

  async function load({ record, blobs }: StoredSession, signal?: AbortSignal): Promise<OpenedStoredSession> {
    const read = await readSessionFiles(record, {
      blobs,
      keep: (entry) => isTranscriptInput(record.agentType, entry.path),
      ...(signal ? { signal } : {}),
    });
    return {
      outline: {
        sessionId: record.sessionId,
        requestId: record.requestId,
        agentType: record.agentType,
        codec: record.codec,
        format: read.format,
        rawSizeBytes: read.rawSizeBytes,
        blobSizeBytes: record.blobSizeBytes,
        storedBytes: record.storedBytes,
        createdAt: record.createdAt,
        expiresAt: record.expiresAt ?? null,
        files: read.manifest.files.map(({ path, size }) => ({ path, size })),
        transcripts: transcriptFiles(read.manifest, read.files),
      },
      files: read.files,
      conversions: new Map(),
    };
  }

  function open(stored: StoredSession, signal?: AbortSignal): Promise<OpenedStoredSession> {
    const { record } = stored;
    const key = `${record.owner}\u0000${record.id}`;
    let opened = cache.get(key);
    if (!opened) {
      const loading = load(stored, signal);
      opened = loading;
      cache.set(key, loading, { size: 1 });
      loading.then(
        (session) => {
          let bytes = 0;
          for (const file of session.files.values()) bytes += file.byteLength;
          if (cache.get(key) === loading) cache.set(key, loading, { size: Math.max(1, 3 * bytes) });
        },
        () => {
          if (cache.get(key) === loading) cache.delete(key);
        },
      );
    }
    return opened;
  }

  async function transcript(stored: StoredSession, path: string, signal?: AbortSignal) {
    const { record } = stored;
    const session = await open(stored, signal);
    const file = session.outline.transcripts.find((each) => each.path === path);
    const bytes = file && session.files.get(path);
    if (!file || !bytes) {
      throw new StowageError(
        "NOT_FOUND",
        `stored session ${record.sessionId} has no transcript ${JSON.stringify(path)}`,
      );
    }
    let converted = session.conversions.get(path);
    if (!converted) {
      converted = convertStoredTranscript(bytes, file.format);
      session.conversions.set(path, converted);
      converted.catch(() => session.conversions.delete(path));
    }
    return converted;
  }

  return {
    /** The record's files and transcripts. */
    async outline(stored: StoredSession, signal?: AbortSignal): Promise<StoredSessionOutline> {
      return (await open(stored, signal)).outline;
    },

    /** A page of the transcript at `path`: entries from `cursor`, at most `limit` and about 1 MiB. */
    async page(
      stored: StoredSession,
      path: string,
      options: { cursor?: string; limit?: number; signal?: AbortSignal },
    ): Promise<TranscriptPage> {
      const { record } = stored;
      const start = parseCursor(options.cursor, record.id);
      const limit = Math.min(Math.max(options.limit ?? DEFAULT_PAGE_ENTRIES, 1), MAX_PAGE_ENTRIES);
      const converted = await transcript(stored, path, options.signal);
      const entries: FoldedThreadEntry[] = [];
      let bytes = 0;
      let next = start;
      while (
        next < converted.entries.length &&
        entries.length < limit &&
        (bytes < PAGE_BYTES || entries.length === 0)
      ) {
        const entry = fittedEntry(converted.entries[next]!, path);
        bytes += Buffer.byteLength(JSON.stringify(entry));
        entries.push(entry);
        next++;
      }
      return {
        path,
        entries,
        total: converted.entries.length,
        ...(next < converted.entries.length ? { cursor: `${record.id}:${next}` } : {}),
        problems: converted.problems.slice(0, 20),
        problemCount: converted.problems.length,
      };
    },

    /** One item of the transcript at `path`, whole (a page carries it cut). */
    async item(stored: StoredSession, path: string, id: string, signal?: AbortSignal): Promise<ThreadItem> {
      const item = (await transcript(stored, path, signal)).items.get(id);
      if (!item)
        throw new StowageError("NOT_FOUND", `no item ${JSON.stringify(id)} in ${JSON.stringify(path)}`);
      return item;
    },

    /** An image found inline in the transcript at `path`, by its SHA-256; undefined when it holds none such. */
    async image(stored: StoredSession, path: string, hash: string, signal?: AbortSignal) {
      return (await transcript(stored, path, signal)).images.get(hash);
    },
  };
}

export type StoredSessionReader = ReturnType<typeof createStoredSessionReader>;

/** One file of a stored session, its bytes as the agent wrote them (read on its own, never kept). */
export async function storedSessionFile(
  { record, blobs }: StoredSession,
  path: string,
  signal?: AbortSignal,
) {
  const read = await readSessionFiles(record, {
    blobs,
    keep: (entry) => entry.path === path,
    ...(signal ? { signal } : {}),
  });
  const bytes = read.files.get(path);
  if (!bytes)
    throw new StowageError(
      "NOT_FOUND",
      `stored session ${record.sessionId} has no file ${JSON.stringify(path)}`,
    );
  return bytes;
}
