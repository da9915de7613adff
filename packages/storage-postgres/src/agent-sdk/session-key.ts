import type { SessionKey, SessionStoreEntry } from "@anthropic-ai/claude-agent-sdk";
import { describeValue, keyProblem, StowageError } from "@stowage/core";
import { assertSessionId } from "@stowage/sessions";

/** Most entries one `append` call accepts (the SDK sends batches of up to 500 by default). */
export const MAX_APPEND_ENTRIES = 10_000;
/** Largest serialized entry accepted, in bytes. */
export const MAX_ENTRY_BYTES = 64 * 1024 * 1024;
/** Largest serialized batch one `append` call accepts, in bytes. */
export const MAX_APPEND_BYTES = 256 * 1024 * 1024;
/** Longest entry `uuid` accepted. */
export const MAX_ENTRY_UUID_LENGTH = 255;

/** A validated key: `subpath` is `""` for the main transcript, as stored. */
export interface StoredKey {
  projectKey: string;
  sessionId: string;
  subpath: string;
}

/**
 * A project key: the SDK's sanitized cwd (`-workspace-app`) or a caller's tenant id. Letters,
 * digits and `-._:@`, at most 255, never `.` or `..`.
 */
export const STORE_PROJECT_KEY_PATTERN = /^[A-Za-z0-9._:@-]{1,255}$/;

/** Validates a project key against {@link STORE_PROJECT_KEY_PATTERN}. */
export function assertStoreProjectKey(projectKey: unknown): asserts projectKey is string {
  if (
    typeof projectKey !== "string" ||
    !STORE_PROJECT_KEY_PATTERN.test(projectKey) ||
    projectKey === "." ||
    projectKey === ".."
  ) {
    throw new StowageError(
      "INVALID_INPUT",
      `projectKey must be 1 to 255 of letters, digits and "-._:@" (not "." or ".."), got ${describeValue(projectKey)}`,
    );
  }
}

/** Validates `{ projectKey, sessionId }`: a safe project key and a UUID session id. */
export function toSessionScope(key: unknown): { projectKey: string; sessionId: string } {
  if (typeof key !== "object" || key === null) {
    throw new StowageError("INVALID_INPUT", `session key must be an object, got ${describeValue(key)}`);
  }
  const { projectKey, sessionId } = key as Record<string, unknown>;
  assertStoreProjectKey(projectKey);
  assertSessionId(sessionId);
  return { projectKey, sessionId };
}

/** Validates a SessionKey: a safe project key, a UUID session id, and a safe relative subpath or none. */
export function toStoredKey(key: SessionKey): StoredKey {
  const scope = toSessionScope(key);
  if (key.subpath !== undefined) {
    const problem = keyProblem(key.subpath);
    if (problem) {
      throw new StowageError(
        "INVALID_INPUT",
        `subpath ${problem} (omit it for the main transcript), got ${describeValue(key.subpath)}`,
      );
    }
  }
  return { ...scope, subpath: key.subpath ?? "" };
}

export interface SerializedEntry {
  uuid: string | null;
  json: string;
}

/** Validates a batch and serializes each entry to JSON text (what is stored). */
export function serializeEntries(entries: unknown): SerializedEntry[] {
  if (!Array.isArray(entries) || entries.length > MAX_APPEND_ENTRIES) {
    throw new StowageError(
      "INVALID_INPUT",
      `entries must be an array of at most ${MAX_APPEND_ENTRIES} entries, got ${describeValue(
        Array.isArray(entries) ? `${entries.length} entries` : entries,
      )}`,
    );
  }
  let total = 0;
  return entries.map((entry: SessionStoreEntry, index) => {
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
    const { uuid } = entry;
    if (
      uuid !== undefined &&
      (typeof uuid !== "string" || uuid.length === 0 || uuid.length > MAX_ENTRY_UUID_LENGTH)
    ) {
      throw new StowageError(
        "INVALID_INPUT",
        `entries[${index}].uuid must be a non-empty string of at most ${MAX_ENTRY_UUID_LENGTH} characters, got ${describeValue(uuid)}`,
      );
    }
    let json: string;
    try {
      json = JSON.stringify(entry);
    } catch (err) {
      throw new StowageError("INVALID_INPUT", `entries[${index}] is not JSON-serializable`, { cause: err });
    }
    const bytes = Buffer.byteLength(json);
    if (bytes > MAX_ENTRY_BYTES) {
      throw new StowageError(
        "TOO_LARGE",
        `entries[${index}] is ${bytes} bytes as JSON, over ${MAX_ENTRY_BYTES}`,
      );
    }
    total += bytes;
    if (total > MAX_APPEND_BYTES) {
      throw new StowageError(
        "TOO_LARGE",
        `the batch is over ${MAX_APPEND_BYTES} bytes as JSON; append it in parts`,
      );
    }
    return { uuid: uuid ?? null, json };
  });
}
