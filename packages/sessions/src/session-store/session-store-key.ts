import type { MovedPayload } from "@stowage/blob-store";
import { assertSafeId, describeValue, keyProblem, StowageError } from "@stowage/core";
import { TEMP_FILE_PREFIX } from "@stowage/core/fs";
import { parsePartName } from "./part-name.js";
import type { SessionKey, SessionStoreEntry, SessionSummaryEntry } from "./types.js";

/** Most entries one `append` call accepts (the SDK sends batches of up to 500 by default). */
export const MAX_APPEND_ENTRIES = 10_000;
/** Largest serialized entry accepted, in bytes. */
export const MAX_ENTRY_BYTES = 64 * 1024 * 1024;
/** Largest serialized batch one `append` call accepts, in bytes. */
export const MAX_APPEND_BYTES = 256 * 1024 * 1024;
/** Longest entry `uuid` accepted. */
export const MAX_ENTRY_UUID_LENGTH = 255;
/** Longest project key accepted. */
export const MAX_PROJECT_KEY_LENGTH = 255;
/**
 * Longest subpath accepted, in UTF-8 bytes (the SDK's are `subagents/agent-<id>`). Bounded so that
 * every key accepted here fits in an object key on every backend, not only in a database column.
 */
export const MAX_SUBPATH_BYTES = 512;

/** A validated key: `subpath` is `""` for the main transcript. */
export interface StoredSessionKey {
  projectKey: string;
  sessionId: string;
  subpath: string;
}

/**
 * A project key: the SDK's sanitized cwd (`-workspace-app`, so a leading dash is allowed) or a
 * caller's tenant id. Letters, digits and `-._:@`, never `.` or `..`: one safe key segment.
 */
const PROJECT_KEY_PATTERN = /^[A-Za-z0-9._:@-]+$/;

/** Validates a project key against {@link PROJECT_KEY_PATTERN}, at most {@link MAX_PROJECT_KEY_LENGTH}. */
export function assertSessionStoreProjectKey(projectKey: unknown): asserts projectKey is string {
  if (
    typeof projectKey !== "string" ||
    projectKey.length > MAX_PROJECT_KEY_LENGTH ||
    !PROJECT_KEY_PATTERN.test(projectKey) ||
    projectKey === "." ||
    projectKey === ".."
  ) {
    throw new StowageError(
      "INVALID_INPUT",
      `projectKey must be 1 to ${MAX_PROJECT_KEY_LENGTH} of letters, digits and "-._:@" (not "." or ".."), got ${describeValue(projectKey)}`,
      { details: { limit: MAX_PROJECT_KEY_LENGTH } },
    );
  }
}

/**
 * Validates `{ projectKey, sessionId }`: a safe project key and an opaque session id that is a
 * safe id (core's `assertSafeId`: printable, bounded, no path characters), UUID or not.
 */
export function toSessionScope(key: unknown): { projectKey: string; sessionId: string } {
  if (typeof key !== "object" || key === null) {
    throw new StowageError("INVALID_INPUT", `session key must be an object, got ${describeValue(key)}`);
  }
  const { projectKey, sessionId } = key as Record<string, unknown>;
  assertSessionStoreProjectKey(projectKey);
  assertSafeId(sessionId, "sessionId");
  return { projectKey, sessionId };
}

/**
 * Why a subpath segment cannot be stored by every backend, or undefined: one named like a part
 * would turn a part into a directory in an object store's layout, and one starting with core's
 * temp-file prefix is what the file-system store keeps for its writes in progress. Refused on
 * every backend, a database's included, so that what one takes, all take.
 */
function subpathSegmentProblem(segment: string): string | undefined {
  if (parsePartName(segment) !== undefined) return "must not have a segment named like a part";
  if (segment.startsWith(TEMP_FILE_PREFIX))
    return `must not have a segment starting with "${TEMP_FILE_PREFIX}" (the file-system store's writes in progress)`;
  return undefined;
}

/**
 * Validates a SessionKey: a scope as {@link toSessionScope}, and a safe relative subpath of at most
 * {@link MAX_SUBPATH_BYTES} whose segments every backend can store (see `subpathSegmentProblem`),
 * or none.
 */
export function toStoredSessionKey(key: SessionKey): StoredSessionKey {
  const scope = toSessionScope(key);
  if (key.subpath !== undefined) {
    const problem = keyProblem(key.subpath);
    if (problem) {
      throw new StowageError(
        "INVALID_INPUT",
        `subpath ${problem} (omit it for the main transcript), got ${describeValue(key.subpath)}`,
      );
    }
    if (Buffer.byteLength(key.subpath) > MAX_SUBPATH_BYTES) {
      throw new StowageError(
        "INVALID_INPUT",
        `subpath must be at most ${MAX_SUBPATH_BYTES} UTF-8 bytes, got ${describeValue(key.subpath)}`,
        { details: { limit: MAX_SUBPATH_BYTES } },
      );
    }
    for (const segment of key.subpath.split("/")) {
      const segmentProblem = subpathSegmentProblem(segment);
      if (segmentProblem)
        throw new StowageError(
          "INVALID_INPUT",
          `subpath ${segmentProblem}, got ${describeValue(key.subpath)}`,
        );
    }
  }
  return { ...scope, subpath: key.subpath ?? "" };
}

/** `project/session[/subpath]`, for messages. */
export const describeSessionKey = (key: StoredSessionKey) =>
  `${key.projectKey}/${key.sessionId}${key.subpath ? `/${key.subpath}` : ""}`;

export interface SerializedEntry {
  uuid: string | null;
  /** The entry as one line of JSON (JSON never contains a raw newline), refs in place of moved payloads. */
  json: string;
  /** The image and document payloads that moved to the blob store, when some did. */
  moved?: MovedPayload[];
}

/** C0 control characters (NUL included) and DEL. */
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

/**
 * Why `uuid` cannot be an entry's uuid, or undefined when it can: 1 to {@link MAX_ENTRY_UUID_LENGTH}
 * characters of well-formed Unicode without control characters. The rule every backend shares:
 * PostgreSQL's text holds no NUL and JSON text no lone surrogate, so an object store, which would
 * hold both, takes neither; a stored uuid that breaks it is corrupt.
 */
export function entryUuidProblem(uuid: unknown): string | undefined {
  if (typeof uuid !== "string" || uuid.length === 0 || uuid.length > MAX_ENTRY_UUID_LENGTH)
    return `must be a non-empty string of at most ${MAX_ENTRY_UUID_LENGTH} characters`;
  if (CONTROL_CHARACTER.test(uuid)) return "must not contain control characters or NUL";
  // String.prototype.isWellFormed: native since Node 20 (ES2024); the lib target is ES2023.
  if (!(uuid as string & { isWellFormed(): boolean }).isWellFormed())
    return "must be well-formed Unicode (no lone surrogates)";
  return undefined;
}

/**
 * A stored entry line parsed and checked as {@link serializeEntries} would have accepted it: an
 * object with a string `type` and, when it has one, a `uuid` that passes {@link entryUuidProblem}.
 * Throws a plain error saying what is wrong; the caller turns it into `INTEGRITY` with where the
 * line was read (a part's key and offset, a row).
 */
export function parseStoredEntry(line: string): SessionStoreEntry {
  return checkStoredEntry(JSON.parse(line), line);
}

/** {@link parseStoredEntry} of an entry already parsed; `line` is what a message shows of it. */
export function checkStoredEntry(entry: unknown, line: unknown): SessionStoreEntry {
  if (typeof entry !== "object" || entry === null || Array.isArray(entry))
    throw new Error(`an entry is a JSON object, got ${describeValue(line)}`);
  const { type, uuid } = entry as Record<string, unknown>;
  if (typeof type !== "string") throw new Error(`an entry's type is a string, got ${describeValue(type)}`);
  const problem = uuid === undefined ? undefined : entryUuidProblem(uuid);
  if (problem) throw new Error(`an entry's uuid ${problem}, got ${describeValue(uuid)}`);
  return entry as SessionStoreEntry;
}

/** True when `value` has the shape of a stored session summary: an object whose `data` is an object. */
export function isStoredSummary(value: unknown): value is SessionSummaryEntry {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const { data } = value as Record<string, unknown>;
  return typeof data === "object" && data !== null && !Array.isArray(data);
}

/** A stored summary's JSON text parsed and checked; throws a plain error, as {@link parseStoredEntry}. */
export function parseStoredSummary(text: string): SessionSummaryEntry {
  const summary: unknown = JSON.parse(text);
  if (!isStoredSummary(summary))
    throw new Error(`a session summary is an object with an object "data", got ${describeValue(text)}`);
  return summary;
}

/** UTF-8 bytes of `text`, counted only when its length alone cannot prove it under `limit`. */
function exceedsBytes(text: string, limit: number): number | undefined {
  if (text.length * 3 <= limit) return undefined;
  const bytes = Buffer.byteLength(text);
  return bytes > limit ? bytes : undefined;
}

/** Validates a batch and serializes each entry to JSON text once (what is stored). */
export function serializeEntries(entries: unknown): SerializedEntry[] {
  if (!Array.isArray(entries) || entries.length > MAX_APPEND_ENTRIES) {
    throw new StowageError(
      "INVALID_INPUT",
      `entries must be an array of at most ${MAX_APPEND_ENTRIES} entries, got ${describeValue(
        Array.isArray(entries) ? `${entries.length} entries` : entries,
      )}`,
      { details: { limit: MAX_APPEND_ENTRIES } },
    );
  }
  let totalLength = 0;
  let exactBytes: number | undefined;
  const out: SerializedEntry[] = new Array(entries.length);
  for (let index = 0; index < entries.length; index++) {
    const entry = entries[index] as SessionStoreEntry;
    if (
      typeof entry !== "object" ||
      entry === null ||
      Array.isArray(entry) ||
      typeof entry.type !== "string"
    ) {
      throw new StowageError(
        "INVALID_INPUT",
        `entries[${index}] must be an object with a string type, got ${describeValue(entry)}`,
      );
    }
    // A toJSON would store another object than the one whose uuid is checked here: an object
    // store would then dedupe on the stored uuid and a database on this one.
    if (typeof (entry as { toJSON?: unknown }).toJSON === "function") {
      throw new StowageError(
        "INVALID_INPUT",
        `entries[${index}] must be plain JSON data, got an object with a toJSON method`,
      );
    }
    const { uuid } = entry;
    const problem = uuid === undefined ? undefined : entryUuidProblem(uuid);
    if (problem) {
      throw new StowageError(
        "INVALID_INPUT",
        `entries[${index}].uuid ${problem}, got ${describeValue(uuid)}`,
        typeof uuid === "string" && uuid.length > MAX_ENTRY_UUID_LENGTH
          ? { details: { limit: MAX_ENTRY_UUID_LENGTH } }
          : {},
      );
    }
    let json: string;
    try {
      json = JSON.stringify(entry);
    } catch (err) {
      throw new StowageError("INVALID_INPUT", `entries[${index}] is not JSON-serializable`, { cause: err });
    }
    const entryBytes = exceedsBytes(json, MAX_ENTRY_BYTES);
    if (entryBytes !== undefined) {
      throw new StowageError(
        "TOO_LARGE",
        `entries[${index}] is ${entryBytes} bytes as JSON, over ${MAX_ENTRY_BYTES}`,
        { details: { limit: MAX_ENTRY_BYTES, size: entryBytes } },
      );
    }
    out[index] = { uuid: uuid ?? null, json };
    // Bytes are counted exactly only once the lengths alone could pass the limit.
    if (exactBytes === undefined) {
      totalLength += json.length;
      if (totalLength * 3 > MAX_APPEND_BYTES) {
        exactBytes = 0;
        for (let i = 0; i <= index; i++) exactBytes += Buffer.byteLength(out[i]!.json);
      }
    } else exactBytes += Buffer.byteLength(json);
    if (exactBytes !== undefined && exactBytes > MAX_APPEND_BYTES) {
      throw new StowageError(
        "TOO_LARGE",
        `the batch is over ${MAX_APPEND_BYTES} bytes as JSON; append it in parts`,
        { details: { limit: MAX_APPEND_BYTES } },
      );
    }
  }
  return out;
}
