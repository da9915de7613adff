import {
  consoleLogger,
  describeValue,
  type Logger,
  mapConcurrent,
  parseBlobRef,
  StowageError,
} from "@stowage/core";
import type { BlobStore } from "../blob-store.js";
import { encodeBase64 } from "./base64.js";
import { rewriteEntry } from "./entry-walker.js";

/** Blobs read at once while resolving refs. */
const DEFAULT_RESOLVE_CONCURRENCY = 8;

/** Options of {@link resolveBlobRefs}. */
export interface ResolveBlobRefsOptions {
  /** Where the blobs are; only `get` is used. */
  /** Its `logger`, when it has one, is the default of `logger`. */
  blobs: Pick<BlobStore, "get"> & Partial<Pick<BlobStore, "logger">>;
  /** Blobs read at once. Default 8. */
  concurrency?: number;
  /** Receives a warning per missing or corrupted blob; default the blob store's `logger`, else `consoleLogger`. */
  logger?: Logger;
  signal?: AbortSignal;
}

/**
 * Turns the `blob:sha256:` refs of image payloads back into base64, reading each distinct blob
 * once with bounded concurrency. A missing or corrupted blob logs a warning and its ref stays in
 * place, so loading a session never fails on it. Refs nested deeper than `MAX_ENTRY_DEPTH` objects
 * and arrays (where `prepareEntryForPersistence` never puts one) stay as they are. Returns new entries; the input is not mutated.
 */
export async function resolveBlobRefs<T>(
  entries: readonly T[],
  options: ResolveBlobRefsOptions,
): Promise<T[]> {
  const { blobs, signal, logger = blobs?.logger ?? consoleLogger } = options;
  const concurrency = options.concurrency ?? DEFAULT_RESOLVE_CONCURRENCY;
  if (!Array.isArray(entries)) {
    throw new StowageError("INVALID_INPUT", `entries must be an array, got ${describeValue(entries)}`);
  }

  const wanted = new Set<string>();
  // Entries holding a ref; the others are returned as they are, without a second walk.
  const holding = new Set<number>();
  let current = 0;
  const collect = {
    image({ payload }: { payload: string }) {
      const hash = parseBlobRef(payload);
      if (hash) {
        wanted.add(hash);
        holding.add(current);
      }
      return undefined;
    },
  };
  for (; current < entries.length; current++) rewriteEntry(entries[current], collect);
  if (wanted.size === 0) return [...entries];

  const hashes = [...wanted];
  const base64ByHash = new Map<string, string>();
  await mapConcurrent(
    hashes,
    concurrency,
    async (hash) => {
      try {
        const bytes = await blobs.get(hash, { signal });
        if (bytes) base64ByHash.set(hash, encodeBase64(bytes));
        else logger.warn({ hash }, `blob ${hash} is missing; its reference is kept`);
      } catch (err) {
        if (!StowageError.is(err, "INTEGRITY")) throw err;
        logger.warn({ hash, error: err.message }, `blob ${hash} is corrupted; its reference is kept`);
      }
    },
    signal,
  );

  return entries.map((entry, index) =>
    !holding.has(index)
      ? entry
      : rewriteEntry(entry, {
          image({ payload }) {
            const hash = parseBlobRef(payload);
            return hash === null ? undefined : base64ByHash.get(hash);
          },
        }),
  );
}
