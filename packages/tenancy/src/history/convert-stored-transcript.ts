import { prepareEntryForPersistence } from "@stowage/blob-store";
import { type Logger, nextTurn, sha256Hex } from "@stowage/core";
import {
  createClaudeCodeTranscriptConverter,
  createCodexRolloutConverter,
  type FoldedThreadEntry,
  foldToolPairs,
  type LineConverter,
  type LineProblem,
  type ThreadItem,
} from "@stowage/thread-items";
import type { TranscriptFormat } from "./transcript-files.js";

/** A stored transcript read as a thread: what the viewer pages through. */
export interface StoredTranscript {
  entries: FoldedThreadEntry[];
  /** Every item by its id (each has one, unique here), for a full payload a page cut. */
  items: Map<string, ThreadItem>;
  /** The images found inline in the transcript, by SHA-256: the items name them by `blob:sha256:` ref. */
  images: Map<string, Uint8Array>;
  problems: LineProblem[];
  /** UTF-8 bytes of the transcript. */
  bytes: number;
}

/** Work done between two turns of the event loop, so that one large transcript never holds the others. */
const SLICE_MS = 8;
/** A line that may hold an image payload: only those are parsed before the converter reads them. */
const MAY_HOLD_IMAGE = /base64|data:image/;

const converters: Record<TranscriptFormat, () => LineConverter> = {
  "claude-code": () => createClaudeCodeTranscriptConverter(),
  codex: () => createCodexRolloutConverter(),
};

// An image kept inline is still shown as its placeholder; nobody needs a warning for a read.
const quiet: Logger = { warn() {} };

/**
 * Moves the line's inline images into `images` (by SHA-256) and puts their `blob:sha256:` refs in
 * their place, as the blob store does for a persisted entry, so that the item's placeholder names
 * the image and the viewer can show it. Nothing is cut: the whole line stays as the agent wrote it.
 */
async function withImageRefs(line: string, images: Map<string, Uint8Array>): Promise<string> {
  let entry: unknown;
  try {
    entry = JSON.parse(line);
  } catch {
    return line; // the converter reports it
  }
  const blobs = {
    async put(bytes: Uint8Array) {
      const hash = sha256Hex(bytes);
      images.set(hash, bytes);
      return { hash, ref: `blob:sha256:${hash}`, size: bytes.byteLength, created: true };
    },
  };
  const prepared = await prepareEntryForPersistence(entry, {
    blobs,
    maxStringChars: Number.MAX_SAFE_INTEGER,
    logger: quiet,
  });
  return prepared === entry ? line : JSON.stringify(prepared);
}

/** Gives every item an id of its own: a transcript's items mostly carry their record's uuid. */
function identify(items: ThreadItem[]): Map<string, ThreadItem> {
  const byId = new Map<string, ThreadItem>();
  for (let index = 0; index < items.length; index++) {
    let item = items[index]!;
    if (item.id === undefined || byId.has(item.id)) {
      // Thread item ids are letters, digits and `.`, `_`, `:`, `@`, `-`.
      item = { ...item, id: `${item.id ?? "item"}.${index}` };
      items[index] = item;
    }
    byId.set(item.id!, item);
  }
  return byId;
}

/**
 * Reads one transcript of a stored session through thread-items' adapter for its format: every
 * line in order (in slices of a few milliseconds), images moved out to refs, the items given ids
 * and folded into tool pairs.
 */
export async function convertStoredTranscript(
  bytes: Uint8Array,
  format: TranscriptFormat,
  signal?: AbortSignal,
): Promise<StoredTranscript> {
  const decoded = new TextDecoder().decode(bytes);
  const text = decoded.startsWith("\uFEFF") ? decoded.slice(1) : decoded;
  const converter = converters[format]();
  const images = new Map<string, Uint8Array>();
  const items: ThreadItem[] = [];
  let sliceStart = performance.now();
  for (let start = 0; start <= text.length; ) {
    const newline = text.indexOf("\n", start);
    const end = newline === -1 ? text.length : newline;
    if (end > start) {
      const raw = text.slice(start, end);
      const line = MAY_HOLD_IMAGE.test(raw) ? await withImageRefs(raw, images) : raw;
      for (const item of converter.push(line)) items.push(item);
    }
    if (newline === -1) break;
    start = newline + 1;
    if (performance.now() - sliceStart > SLICE_MS) {
      await nextTurn();
      signal?.throwIfAborted();
      sliceStart = performance.now();
    }
  }
  for (const item of converter.end()) items.push(item);
  const byId = identify(items);
  return {
    entries: foldToolPairs(items),
    items: byId,
    images,
    problems: [...converter.problems],
    bytes: bytes.byteLength,
  };
}
