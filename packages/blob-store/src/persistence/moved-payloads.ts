import {
  BLOB_REF_PREFIX,
  type ContentStore,
  describeValue,
  isSha256Hex,
  mapConcurrent,
  parseBlobRef,
  StowageError,
  sha256Hex,
} from "@stowage/core";
import { decodeBase64 } from "./base64.js";
import { base64FormOf, encodeInForm, isBase64Form } from "./base64-form.js";
import { MAX_ENTRY_DEPTH, rewriteEntry } from "./entry-walker.js";
import { BLOB_EXTERNALIZE_THRESHOLD } from "./prepare-entry.js";

/**
 * One image or document payload moved out of an entry into the blob store, with what rebuilds its
 * text exactly: where it was, which blob, and how its base64 was written. The entry keeps its
 * `blob:sha256:` ref in that place (after a data URL's header, kept as written).
 */
export interface MovedPayload {
  /** Keys and indexes from the entry down to the string that held the payload. */
  path: (string | number)[];
  /** SHA-256 of the payload's bytes: its blob. */
  sha256: string;
  /** How its base64 was written: `""` for canonical base64 (see the README for the others). */
  form: string;
}

/** One entry of {@link findEntryPayloads}'s result: the entry with refs, and what moved. */
export interface ExternalizedEntry<T> {
  entry: T;
  moved: MovedPayload[];
}

/** Options of {@link restoreEntryPayloads}. */
export interface RestorePayloadsOptions {
  /** Where the payloads are; only `get` is used (a `ContentStore` verifies what it returns). */
  blobs: Pick<ContentStore, "get">;
  /** Blobs read at once. Default 8. */
  concurrency?: number;
  signal?: AbortSignal;
}

/** Blobs read at once by default. */
const DEFAULT_GET_CONCURRENCY = 8;

/** What {@link findEntryPayloads} found: each entry with refs (or undefined) and each distinct payload's bytes. */
export interface FoundEntryPayloads<T> {
  entries: (ExternalizedEntry<T> | undefined)[];
  /** The bytes of every distinct payload the entries' refs name, by SHA-256. */
  payloads: Map<string, Uint8Array>;
}

/** Options of {@link findEntryPayloads}. */
export interface FindPayloadsOptions {
  /** Payloads of at least this many base64 characters move. Default 1,024. */
  threshold?: number;
}

/**
 * Finds the image and document payloads of `entries` (the places `prepareEntryForPersistence`
 * finds) and gives, per entry, the entry with `blob:sha256:` refs and the list of what moved;
 * `undefined` for an entry where nothing did (it is then kept as it is, the same object); and the
 * bytes of each distinct payload, for the caller to store where its refs will be read from.
 * Unlike `prepareEntryForPersistence` nothing else changes: no string is cut, no field dropped,
 * so that {@link restoreEntryPayloads} gives back exactly what was given. A payload moves only
 * when its text can be rebuilt exactly from its bytes (canonical, URL-safe, unpadded or evenly
 * line-wrapped base64); any other text, and a ref already in place, stays. Stores nothing; the
 * input is not mutated.
 */
export function findEntryPayloads<T>(
  entries: readonly T[],
  options: FindPayloadsOptions = {},
): FoundEntryPayloads<T> {
  const threshold = options.threshold ?? BLOB_EXTERNALIZE_THRESHOLD;
  if (!Number.isSafeInteger(threshold) || threshold < 1) {
    throw new StowageError(
      "INVALID_INPUT",
      `threshold must be a positive integer, got ${describeValue(threshold)}`,
    );
  }
  const payloads = new Map<string, Uint8Array>();
  // The Read tool writes each image twice: its text is decoded, checked and hashed once.
  const known = new Map<string, { sha256: string; form: string } | null>();
  const read = (payload: string): { sha256: string; form: string } | null => {
    const seen = known.get(payload);
    if (seen !== undefined) return seen;
    const bytes = decodeBase64(payload);
    const form = bytes ? base64FormOf(payload, bytes) : undefined;
    const found = bytes && form !== undefined ? { sha256: sha256Hex(bytes), form } : null;
    if (found && !payloads.has(found.sha256)) payloads.set(found.sha256, bytes!);
    known.set(payload, found);
    return found;
  };
  const found = entries.map((entry): ExternalizedEntry<T> | undefined => {
    const moved: MovedPayload[] = [];
    const rewritten = rewriteEntry(entry, {
      image({ payload, path }) {
        if (payload.length < threshold || parseBlobRef(payload) !== null) return undefined;
        const payloadFound = read(payload);
        if (!payloadFound) return undefined;
        moved.push({ path: [...path], sha256: payloadFound.sha256, form: payloadFound.form });
        return BLOB_REF_PREFIX + payloadFound.sha256;
      },
    });
    return moved.length === 0 ? undefined : { entry: rewritten, moved };
  });
  return { entries: found, payloads };
}

type Container = Record<string, unknown> | unknown[];

/** The container that holds the last step of `path` inside `entry`, or undefined when the path leads nowhere. */
function parentOf(entry: unknown, path: readonly (string | number)[]): Container | undefined {
  let current: unknown = entry;
  for (let i = 0; i < path.length - 1; i++) {
    const step = path[i]!;
    if (typeof step === "number") current = Array.isArray(current) ? current[step] : undefined;
    // Own fields only: a path through `__proto__` or `constructor` must not reach Object's members.
    else current = isRecord(current) && Object.hasOwn(current, step) ? current[step] : undefined;
  }
  return Array.isArray(current) || isRecord(current) ? current : undefined;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function brokenRef(ref: string, entryIndex: number): StowageError {
  return new StowageError(
    "INTEGRITY",
    `entry ${entryIndex}: the payload recorded as moved to ${ref} is not where it was recorded (the entry was changed outside its store)`,
    { reason: "PAYLOAD_REF_MISMATCH", details: { ref, entry: entryIndex } },
  );
}

/**
 * Puts every moved payload back where it was, rebuilt exactly from its blob and its form: the
 * entries (freshly parsed, owned by the caller) are changed in place. Each distinct blob is read
 * once, at most `concurrency` at a time. A blob that is missing is `INTEGRITY` / `MISSING_BLOB`
 * with the ref in `details.ref` (never an entry with a ref where an image was); a corrupted one is
 * the blob store's `INTEGRITY`; a recorded place that does not hold the ref is `INTEGRITY` /
 * `PAYLOAD_REF_MISMATCH`.
 */
export async function restoreEntryPayloads(
  entries: unknown[],
  moved: ReadonlyMap<number, readonly MovedPayload[]>,
  options: RestorePayloadsOptions,
): Promise<void> {
  if (moved.size === 0) return;
  const { blobs, signal } = options;
  const wanted = new Set<string>();
  for (const list of moved.values()) for (const payload of list) wanted.add(payload.sha256);
  const bytesBySha = new Map<string, Uint8Array>();
  await mapConcurrent(
    [...wanted],
    options.concurrency ?? DEFAULT_GET_CONCURRENCY,
    async (sha256) => {
      const bytes = await blobs.get(sha256, { signal });
      if (!bytes) {
        const ref = BLOB_REF_PREFIX + sha256;
        throw new StowageError("INTEGRITY", `blob ${ref} of a stored entry is missing`, {
          reason: "MISSING_BLOB",
          details: { ref },
        });
      }
      bytesBySha.set(sha256, bytes);
    },
    signal,
  );
  // The Read tool's two copies of one image share one encoding.
  const texts = new Map<string, string>();
  for (const [entryIndex, list] of moved) {
    for (const { path, sha256, form } of list) {
      const ref = BLOB_REF_PREFIX + sha256;
      const parent = parentOf(entries[entryIndex], path);
      const last = path[path.length - 1]!;
      const held = parent === undefined ? undefined : (parent as Record<string | number, unknown>)[last];
      const owned = Array.isArray(parent)
        ? typeof last === "number"
        : parent !== undefined && Object.hasOwn(parent, last);
      if (!owned || typeof held !== "string" || !held.endsWith(ref)) throw brokenRef(ref, entryIndex);
      const textKey = `${sha256} ${form}`;
      let text = texts.get(textKey);
      if (text === undefined) {
        text = encodeInForm(bytesBySha.get(sha256)!, form);
        texts.set(textKey, text);
      }
      (parent as Record<string | number, unknown>)[last] = held.slice(0, held.length - ref.length) + text;
    }
  }
}

const MAX_PATH_STEP = 2 ** 32 - 2;

/** Why `value` is not one stored {@link MovedPayload}, or undefined when it is. */
function movedPayloadProblem(value: unknown): string | undefined {
  if (!isRecord(value)) return "is not an object";
  const { path, sha256, form } = value;
  if (!Array.isArray(path) || path.length === 0 || path.length > 2 * MAX_ENTRY_DEPTH) return "has no path";
  for (const step of path) {
    if (typeof step === "string") continue;
    if (!Number.isInteger(step) || step < 0 || step > MAX_PATH_STEP)
      return "has a path step that is neither a key nor an index";
  }
  if (typeof sha256 !== "string" || !isSha256Hex(sha256)) return "has no SHA-256";
  if (!isBase64Form(form)) return "has no base64 form";
  return undefined;
}

/**
 * A stored list of moved payloads checked (what {@link findEntryPayloads} gave, as JSON
 * keeps it). Throws a plain error saying what is wrong; the caller turns it into `INTEGRITY` with
 * where it read the list.
 */
export function parseMovedPayloads(value: unknown): MovedPayload[] {
  if (!Array.isArray(value) || value.length === 0)
    throw new Error(`moved payloads are a non-empty array, got ${describeValue(value)}`);
  for (const [index, payload] of value.entries()) {
    const problem = movedPayloadProblem(payload);
    if (problem) throw new Error(`moved payload ${index} ${problem}: ${describeValue(payload)}`);
  }
  return value as MovedPayload[];
}
