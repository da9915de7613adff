import { describeValue, StowageError } from "@stowage/core";
import {
  assertPositiveInteger,
  assertSessionArchive,
  DEFAULT_MAX_SESSION_BLOB_BYTES,
} from "../archive/session-archive.js";
import {
  type CreateSessionBlobInput,
  DEFAULT_DELETE_EXPIRED_BATCH,
  DEFAULT_SESSION_TTL_MS,
  type DeleteExpiredOptions,
  MAX_DELETE_EXPIRED_BATCH,
} from "./session-blob-repository.js";

/** Longest request id accepted. */
export const MAX_REQUEST_ID_LENGTH = 255;
/** A host's request id: letters, digits and `._:@-`, starting with a letter or digit. */
export const REQUEST_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:@-]*$/;
/** An agent type such as `claude-code`: 1 to 64 of letters, digits and `._-`. */
export const AGENT_TYPE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function assertRequestId(value: unknown): asserts value is string {
  if (typeof value !== "string" || value.length > MAX_REQUEST_ID_LENGTH || !REQUEST_ID_PATTERN.test(value)) {
    throw new StowageError(
      "INVALID_INPUT",
      `request id must be 1 to ${MAX_REQUEST_ID_LENGTH} of letters, digits and "._:@-", starting with a letter or digit, got ${describeValue(value)}`,
    );
  }
}

export function assertAgentType(value: unknown): asserts value is string {
  if (typeof value !== "string" || !AGENT_TYPE_PATTERN.test(value)) {
    throw new StowageError(
      "INVALID_INPUT",
      `agent type must be 1 to 64 of letters, digits and "._-" such as "claude-code", got ${describeValue(value)}`,
    );
  }
}

export interface SessionBlobLimits {
  /** Default {@link DEFAULT_SESSION_TTL_MS}. */
  ttlMs?: number;
  /** Default {@link DEFAULT_MAX_SESSION_BLOB_BYTES}. */
  maxBlobBytes?: number;
}

/** Validates a repository's options; returns them with defaults. */
export function resolveSessionBlobLimits(limits: SessionBlobLimits = {}): Required<SessionBlobLimits> {
  const ttlMs = limits.ttlMs ?? DEFAULT_SESSION_TTL_MS;
  assertPositiveInteger(ttlMs, "ttlMs");
  const maxBlobBytes = limits.maxBlobBytes ?? DEFAULT_MAX_SESSION_BLOB_BYTES;
  assertPositiveInteger(maxBlobBytes, "maxBlobBytes");
  return { ttlMs, maxBlobBytes };
}

/** `input` validated, with `expiresAt` resolved against `now` and the TTL. For backends. */
export function normalizeCreateInput(
  input: CreateSessionBlobInput,
  limits: Required<SessionBlobLimits>,
  now: Date,
): CreateSessionBlobInput & { expiresAt: Date | null } {
  if (typeof input !== "object" || input === null) {
    throw new StowageError("INVALID_INPUT", `session record must be an object, got ${describeValue(input)}`);
  }
  assertRequestId(input.requestId);
  assertAgentType(input.agentType);
  assertSessionArchive(input, limits.maxBlobBytes);
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
  return {
    ...input,
    expiresAt: expiresAt === undefined ? new Date(now.getTime() + limits.ttlMs) : expiresAt,
  };
}

/** `deleteExpired` options validated, with defaults. */
export function resolveDeleteExpiredOptions(options: DeleteExpiredOptions = {}): {
  batchSize: number;
  maxBatches: number;
} {
  const batchSize = options.batchSize ?? DEFAULT_DELETE_EXPIRED_BATCH;
  if (!Number.isSafeInteger(batchSize) || batchSize < 1 || batchSize > MAX_DELETE_EXPIRED_BATCH) {
    throw new StowageError(
      "INVALID_INPUT",
      `batchSize must be an integer from 1 to ${MAX_DELETE_EXPIRED_BATCH}, got ${describeValue(batchSize)}`,
    );
  }
  const maxBatches = options.maxBatches ?? Number.POSITIVE_INFINITY;
  if (maxBatches !== Number.POSITIVE_INFINITY && (!Number.isSafeInteger(maxBatches) || maxBatches < 1)) {
    throw new StowageError(
      "INVALID_INPUT",
      `maxBatches must be a positive integer, got ${describeValue(maxBatches)}`,
    );
  }
  return { batchSize, maxBatches };
}
