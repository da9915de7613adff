import { assertSafeId, describeValue, StowageError } from "@stowage/core";
import { assertSessionAgent, type SessionAgent } from "../agents/session-agent.js";
import { DEFAULT_MAX_SESSION_BYTES } from "../archive/manifest.js";
import {
  assertPositiveInteger,
  assertSessionArchive,
  DEFAULT_MAX_SESSION_BLOB_BYTES,
} from "../archive/session-archive.js";
import { verifySessionBlob } from "../archive/verify-session-blob.js";
import {
  type CreateSessionBlobInput,
  DEFAULT_DELETE_EXPIRED_BATCH,
  DEFAULT_SESSION_BLOB_PAGE_SIZE,
  DEFAULT_SESSION_TTL_MS,
  type DeleteExpiredOptions,
  type ListOwnedSessionBlobsOptions,
  MAX_DELETE_EXPIRED_BATCH,
  MAX_SESSION_BLOB_PAGE_SIZE,
} from "./session-blob-repository.js";

/** Longest request id accepted (a safe id: letters, digits and `._:@-`, starting with a letter or digit). */
export const MAX_REQUEST_ID_LENGTH = 255;
/** Longest agent type accepted (a safe id such as `claude-code`). */
export const MAX_AGENT_TYPE_LENGTH = 64;
/** Longest owner accepted (a safe id such as `user:alice` or `org:acme`). */
export const MAX_OWNER_LENGTH = 255;

/** Throws INVALID_INPUT unless `value` is an owner: a safe id of at most 255 characters. */
export function assertOwner(value: unknown): asserts value is string {
  assertSafeId(value, "owner", MAX_OWNER_LENGTH);
}

/** Throws INVALID_INPUT unless `value` is a host's request id: a safe id of at most 255 characters. */
export function assertRequestId(value: unknown): asserts value is string {
  assertSafeId(value, "request id", MAX_REQUEST_ID_LENGTH);
}

/**
 * Throws INVALID_INPUT unless `value` is an agent type: one of `SESSION_AGENTS` (so the blob can
 * be restored), which are safe ids of at most 64 characters.
 */
function assertAgentType(value: unknown): asserts value is string {
  assertSafeId(value, "agent type", MAX_AGENT_TYPE_LENGTH);
  assertSessionAgent(value, "agent type");
}

export interface SessionBlobLimits {
  /** Expiry of a record stored without `expiresAt`. Default 7 days. */
  ttlMs?: number;
  /** Largest compressed blob accepted. Default 64 MiB. */
  maxBlobBytes?: number;
  /** Cap on a blob's decompressed size, checked when it is stored. Default 256 MiB. */
  maxRawBytes?: number;
}

/** Validates a repository's options; returns them with defaults. */
export function resolveSessionBlobLimits(limits: SessionBlobLimits = {}): Required<SessionBlobLimits> {
  const ttlMs = limits.ttlMs ?? DEFAULT_SESSION_TTL_MS;
  assertPositiveInteger(ttlMs, "ttlMs");
  const maxBlobBytes = limits.maxBlobBytes ?? DEFAULT_MAX_SESSION_BLOB_BYTES;
  assertPositiveInteger(maxBlobBytes, "maxBlobBytes");
  const maxRawBytes = limits.maxRawBytes ?? DEFAULT_MAX_SESSION_BYTES;
  assertPositiveInteger(maxRawBytes, "maxRawBytes");
  return { ttlMs, maxBlobBytes, maxRawBytes };
}

/**
 * `input` validated, with `expiresAt` resolved against `now` and the TTL. For backends. The blob
 * itself is read through (`verifySessionBlob`): one that could not be restored as a session of
 * `agentType` is refused now (INVALID_INPUT, TOO_LARGE, INTEGRITY), never stored; `rawSizeBytes`
 * is the size it measured (a compatibility-format blob of several gzip members records none).
 */
export async function normalizeCreateInput(
  input: CreateSessionBlobInput,
  limits: SessionBlobLimits,
  now: Date,
  options: { signal?: AbortSignal; preverified?: boolean } = {},
): Promise<CreateSessionBlobInput & { storedBytes: number; expiresAt: Date | null }> {
  const resolved = resolveSessionBlobLimits(limits);
  if (typeof input !== "object" || input === null) {
    throw new StowageError("INVALID_INPUT", `session record must be an object, got ${describeValue(input)}`);
  }
  assertOwner(input.owner);
  assertRequestId(input.requestId);
  assertAgentType(input.agentType);
  assertSessionArchive(input, resolved.maxBlobBytes);
  const { expiresAt } = input;
  if (
    expiresAt !== undefined &&
    expiresAt !== null &&
    (!(expiresAt instanceof Date) || Number.isNaN(expiresAt.getTime()))
  ) {
    throw new StowageError(
      "INVALID_INPUT",
      `expiresAt must be a valid Date, null or absent, got ${describeValue(expiresAt)}`,
    );
  }
  const storedBytes = input.storedBytes ?? input.blob.byteLength;
  if (!Number.isSafeInteger(storedBytes) || storedBytes < 0) {
    throw new StowageError(
      "INVALID_INPUT",
      `storedBytes must be a non-negative integer or absent, got ${describeValue(storedBytes)}`,
    );
  }
  // A sealed blob was verified before it was sealed (see `CreateSessionBlobOptions.preverified`).
  const { rawSizeBytes } = options.preverified
    ? input
    : await verifySessionBlob(input, {
        agent: input.agentType as SessionAgent,
        maxBytes: resolved.maxRawBytes,
        ...(options.signal ? { signal: options.signal } : {}),
      });
  return {
    ...input,
    rawSizeBytes,
    storedBytes,
    expiresAt: expiresAt === undefined ? new Date(now.getTime() + resolved.ttlMs) : expiresAt,
  };
}

/** An `extendExpiry` time: a valid Date after `now`, INVALID_INPUT naming what was given otherwise. */
export function assertLaterExpiry(expiresAt: unknown, now: Date): asserts expiresAt is Date {
  if (!(expiresAt instanceof Date) || Number.isNaN(expiresAt.getTime()) || expiresAt <= now) {
    throw new StowageError(
      "INVALID_INPUT",
      `expiresAt must be a Date after now (${now.toISOString()}), got ${describeValue(expiresAt)}`,
    );
  }
}

/** `deleteExpired` options validated, with defaults. */
export function resolveDeleteExpiredOptions(options: DeleteExpiredOptions = {}): {
  batchSize: number;
  maxBatches: number;
  graceMs: number;
} {
  const batchSize = options.batchSize ?? DEFAULT_DELETE_EXPIRED_BATCH;
  if (!Number.isSafeInteger(batchSize) || batchSize < 1 || batchSize > MAX_DELETE_EXPIRED_BATCH) {
    throw new StowageError(
      "INVALID_INPUT",
      `batchSize must be an integer from 1 to ${MAX_DELETE_EXPIRED_BATCH}, got ${describeValue(batchSize)}`,
      { details: { limit: MAX_DELETE_EXPIRED_BATCH } },
    );
  }
  const maxBatches = options.maxBatches ?? Number.POSITIVE_INFINITY;
  if (maxBatches !== Number.POSITIVE_INFINITY && (!Number.isSafeInteger(maxBatches) || maxBatches < 1)) {
    throw new StowageError(
      "INVALID_INPUT",
      `maxBatches must be a positive integer, got ${describeValue(maxBatches)}`,
    );
  }
  if (options.onDeleted !== undefined && typeof options.onDeleted !== "function") {
    throw new StowageError(
      "INVALID_INPUT",
      `onDeleted must be a function or absent, got ${describeValue(options.onDeleted)}`,
    );
  }
  const graceMs = options.graceMs ?? 0;
  if (!Number.isSafeInteger(graceMs) || graceMs < 0) {
    throw new StowageError(
      "INVALID_INPUT",
      `graceMs must be a non-negative integer of milliseconds, got ${describeValue(graceMs)}`,
    );
  }
  return { batchSize, maxBatches, graceMs };
}

/** A `list` cursor: the decimal id of the last record of a page (no sign, no leading zero). */
const CURSOR_PATTERN = /^[1-9][0-9]{0,15}$/;

/**
 * `list` options validated: the id the page starts after (0 for the first page) and the page
 * size. For backends, which end a page with `cursor: String(lastRecord.id)` when more may follow.
 */
export function resolveListSessionBlobsOptions(options: ListOwnedSessionBlobsOptions = {}): {
  afterId: number;
  limit: number;
  /** `listByOwner`'s: the expired records instead of the live ones. */
  expired: boolean;
} {
  const limit = options.limit ?? DEFAULT_SESSION_BLOB_PAGE_SIZE;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_SESSION_BLOB_PAGE_SIZE) {
    throw new StowageError(
      "INVALID_INPUT",
      `limit must be an integer from 1 to ${MAX_SESSION_BLOB_PAGE_SIZE}, got ${describeValue(limit)}`,
      { details: { limit: MAX_SESSION_BLOB_PAGE_SIZE } },
    );
  }
  const { cursor, expired = false } = options;
  if (typeof expired !== "boolean") {
    throw new StowageError("INVALID_INPUT", `expired must be a boolean, got ${describeValue(expired)}`);
  }
  if (cursor === undefined) return { afterId: 0, limit, expired };
  if (typeof cursor !== "string" || !CURSOR_PATTERN.test(cursor) || !Number.isSafeInteger(Number(cursor))) {
    throw new StowageError(
      "INVALID_INPUT",
      `cursor must be the cursor of a previous page, got ${describeValue(cursor)}`,
      { reason: "INVALID_CURSOR" },
    );
  }
  return { afterId: Number(cursor), limit, expired };
}
