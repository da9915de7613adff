import { assertSafeId, describeValue, StowageError, sha256Hex } from "@stowage/core";
import { z } from "zod";
import { deepFreeze } from "../hot-state/deep-freeze.js";
import type { ShedItem } from "../hot-state/shed-steps.js";
import { type HotState, HotStateSchema } from "../schemas/hot-state-schema.js";
import { invalidInput } from "../schemas/validation-error.js";

/** The highest version a session's hot state can reach (keys hold 12 digits). */
export const MAX_HOT_STATE_VERSION = 999_999_999_999;

/** One stored version of a session's hot state, as readers get it. */
export interface HotStateVersion {
  sessionId: string;
  /** 1 for the first write, then one more per write. */
  version: number;
  /** SHA-256 (hex) of this version's stored bytes: what the next version carries as `previousHash`. */
  hash: string;
  /** `hash` of version `version - 1`; `null` for version 1. */
  previousHash: string | null;
  /** When the dispatcher wrote it (ISO 8601). */
  writtenAt: string;
  /** The fitted state (deeply frozen), its prompt JSON and the rest of its `buildHotState` result. */
  state: Readonly<HotState>;
  json: string;
  tokens: number;
  bytes: number;
  truncated: boolean;
  minimal: boolean;
  shed: readonly ShedItem[];
}

/** The stored form of a version (one JSON object per key), in the snake_case of the other records. */
const StoredVersionSchema = z.strictObject({
  type: z.literal("hot_state_version"),
  session_id: z.string(),
  version: z.int().min(1).max(MAX_HOT_STATE_VERSION),
  previous_hash: z
    .string()
    .regex(/^[a-f0-9]{64}$/)
    .nullable(),
  written_at: z.iso.datetime(),
  tokens: z.int().nonnegative(),
  bytes: z.int().nonnegative(),
  truncated: z.boolean(),
  minimal: z.boolean(),
  shed: z.array(z.unknown()),
  state: z.unknown(),
});

/** Throws INVALID_INPUT unless `version` is a whole number from 1 to {@link MAX_HOT_STATE_VERSION}. */
export function assertVersion(version: unknown, what = "version"): asserts version is number {
  if (!Number.isInteger(version) || (version as number) < 1 || (version as number) > MAX_HOT_STATE_VERSION) {
    throw invalidInput(
      `${what} must be a whole number from 1 to ${MAX_HOT_STATE_VERSION}, got ${describeValue(version)}`,
    );
  }
}

/** The key of one version: `<prefix><sessionId>/<version, 12 digits>.json` (so keys sort by version). */
export function versionKey(prefix: string, sessionId: string, version: number): string {
  assertSafeId(sessionId, "sessionId");
  assertVersion(version);
  return `${prefix}${sessionId}/${String(version).padStart(12, "0")}.json`;
}

/** Serializes a version for storage; its hash is the SHA-256 of exactly these bytes. */
export function encodeVersion(version: Omit<HotStateVersion, "hash" | "json">): Uint8Array {
  const stored: z.infer<typeof StoredVersionSchema> = {
    type: "hot_state_version",
    session_id: version.sessionId,
    version: version.version,
    previous_hash: version.previousHash,
    written_at: version.writtenAt,
    tokens: version.tokens,
    bytes: version.bytes,
    truncated: version.truncated,
    minimal: version.minimal,
    shed: [...version.shed],
    state: version.state,
  };
  return new TextEncoder().encode(JSON.stringify(stored));
}

/**
 * Reads stored bytes back. Anything that does not parse, has the wrong shape, or names another
 * session or version than its key is INTEGRITY: a reader never gets a state that was not written
 * as this version.
 */
export function decodeVersion(bytes: Uint8Array, sessionId: string, version: number): HotStateVersion {
  const damaged = (why: string) =>
    new StowageError("INTEGRITY", `hot state ${sessionId} version ${version} is damaged: ${why}`, {
      details: { sessionId, version },
    });
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    throw damaged("not UTF-8 JSON");
  }
  const stored = StoredVersionSchema.safeParse(parsed);
  if (!stored.success) throw damaged("not a stored hot-state version");
  const record = stored.data;
  if (record.session_id !== sessionId || record.version !== version)
    throw damaged("another session or version");
  if ((version === 1) !== (record.previous_hash === null))
    throw damaged("previous_hash does not match its version");
  const state = HotStateSchema.safeParse(record.state);
  if (!state.success || state.data.session_id !== sessionId)
    throw damaged("its state is not a valid hot state");
  const { previous_hash: previousHash, written_at: writtenAt, tokens, truncated, minimal } = record;
  const json = JSON.stringify(state.data);
  const shed = record.shed as ShedItem[];
  const hash = sha256Hex(bytes);
  return deepFreeze({
    sessionId,
    version,
    hash,
    previousHash,
    writtenAt,
    state: state.data,
    json,
    tokens,
    bytes: record.bytes,
    truncated,
    minimal,
    shed,
  });
}
