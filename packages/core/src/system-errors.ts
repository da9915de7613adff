import { StowageError, type StowageErrorCode } from "./errors.js";

const CODE_BY_ERRNO: Readonly<Record<string, StowageErrorCode>> = {
  ENOENT: "NOT_FOUND",
  EEXIST: "ALREADY_EXISTS",
  ENOSPC: "STORAGE_FULL",
  EDQUOT: "STORAGE_FULL",
  EACCES: "FORBIDDEN",
  EPERM: "FORBIDDEN",
  EROFS: "FORBIDDEN",
  ENOTDIR: "CONFLICT",
  EISDIR: "CONFLICT",
  ENOTEMPTY: "CONFLICT",
  ENAMETOOLONG: "INVALID_INPUT",
  EFBIG: "TOO_LARGE",
  EMFILE: "UNAVAILABLE",
  ENFILE: "UNAVAILABLE",
  EBUSY: "UNAVAILABLE",
  EAGAIN: "UNAVAILABLE",
  EIO: "UNAVAILABLE",
  ETIMEDOUT: "UNAVAILABLE",
  ECONNREFUSED: "UNAVAILABLE",
  ECONNRESET: "UNAVAILABLE",
  EPIPE: "UNAVAILABLE",
};

/** The `code` of a Node system error (`ENOENT`, …), if `err` is one. */
export function errnoOf(err: unknown): string | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  return typeof code === "string" ? code : undefined;
}

export function isAbortError(err: unknown): boolean {
  return (
    typeof err === "object" &&
    err !== null &&
    ((err as { name?: unknown }).name === "AbortError" || (err as { name?: unknown }).name === "TimeoutError")
  );
}

/**
 * Map a Node system error (or anything else thrown) to a StowageError, at the edge where it
 * happened. A StowageError passes through unchanged. `context` says what was being done,
 * e.g. `fs put "a/b"`.
 */
export function fromSystemError(err: unknown, context: string): StowageError {
  if (StowageError.is(err)) return err;
  if (isAbortError(err)) return new StowageError("ABORTED", `${context}: aborted`, { cause: err });
  const errno = errnoOf(err);
  const code: StowageErrorCode = (errno === undefined ? undefined : CODE_BY_ERRNO[errno]) ?? "INTERNAL";
  const detail = err instanceof Error ? err.message : String(err);
  return new StowageError(code, `${context}: ${detail}`, {
    cause: err,
    ...(errno ? { reason: errno } : {}),
  });
}
