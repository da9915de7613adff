/** Every code a {@link StowageError} can carry. Callers branch on these, never on message text. */
export const STOWAGE_ERROR_CODES = [
  "NOT_FOUND",
  "ALREADY_EXISTS",
  "INVALID_INPUT",
  "INTEGRITY",
  "TOO_LARGE",
  "QUOTA_EXCEEDED",
  "BUDGET_EXCEEDED",
  "UNAUTHORIZED",
  "FORBIDDEN",
  "EXPIRED",
  "UNAVAILABLE",
  "RATE_LIMITED",
  "ABORTED",
  "CONFLICT",
  "STORAGE_FULL",
  "INTERNAL",
] as const;

export type StowageErrorCode = (typeof STOWAGE_ERROR_CODES)[number];

export interface StowageErrorOptions {
  cause?: unknown;
  /** A finer, machine-readable reason within the code, e.g. `THREAD_ITEM_TOO_LARGE`. */
  reason?: string;
  /** Structured facts about the failure (limits, sizes, ids); must be JSON-serializable. */
  details?: Record<string, unknown>;
}

/**
 * The one error wire format of every Stowage HTTP surface (the app, the uploads handler, signed
 * direct-transfer URLs): a flat JSON object whose `error` is the human message, which is what the
 * upload API's documented clients read.
 */
export interface ErrorBody {
  /** What went wrong, for people. */
  error: string;
  code: StowageErrorCode;
  reason?: string;
  details?: Record<string, unknown>;
}

// A registry-wide symbol, so that `StowageError.is` recognizes errors thrown by another copy of
// this package (two versions installed side by side, or a bundled copy).
const STOWAGE_ERROR_MARKER = Symbol.for("@stowage/core/StowageError");

const codeSet: ReadonlySet<string> = new Set(STOWAGE_ERROR_CODES);

export class StowageError extends Error {
  readonly code: StowageErrorCode;
  readonly reason: string | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: StowageErrorCode, message: string, options: StowageErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "StowageError";
    this.code = code;
    this.reason = options.reason;
    this.details = options.details;
  }

  /** True when `err` is a StowageError from any copy of this package (and has `code`, if given). */
  static is(err: unknown, code?: StowageErrorCode): err is StowageError {
    if (typeof err !== "object" || err === null) return false;
    if ((err as Record<symbol, unknown>)[STOWAGE_ERROR_MARKER] !== true) return false;
    const actual = (err as { code?: unknown }).code;
    if (typeof actual !== "string" || !codeSet.has(actual)) return false;
    return code === undefined || actual === code;
  }

  /** The error wire format (see `ErrorBody`): no stack, no cause. */
  toJSON(): ErrorBody {
    return {
      error: this.message,
      code: this.code,
      ...(this.reason === undefined ? {} : { reason: this.reason }),
      ...(this.details === undefined ? {} : { details: this.details }),
    };
  }
}

Object.defineProperty(StowageError.prototype, STOWAGE_ERROR_MARKER, { value: true });

/** HTTP status for each code, for servers that turn a StowageError into a response. */
export const HTTP_STATUS_BY_CODE: Readonly<Record<StowageErrorCode, number>> = {
  NOT_FOUND: 404,
  ALREADY_EXISTS: 409,
  INVALID_INPUT: 400,
  INTEGRITY: 422,
  TOO_LARGE: 413,
  QUOTA_EXCEEDED: 400,
  BUDGET_EXCEEDED: 422,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  EXPIRED: 410,
  UNAVAILABLE: 503,
  RATE_LIMITED: 429,
  ABORTED: 499,
  CONFLICT: 409,
  STORAGE_FULL: 507,
  INTERNAL: 500,
};
