import { fromSystemError, StowageError, type StowageErrorCode } from "@stowage/core";

/** S3 error codes (the `Code` of an error response, the SDK's `name`) and what they mean here. */
const CODE_BY_S3_ERROR: Readonly<Record<string, StowageErrorCode>> = {
  NoSuchKey: "NOT_FOUND",
  NotFound: "NOT_FOUND",
  NoSuchBucket: "NOT_FOUND",
  NoSuchUpload: "NOT_FOUND",
  PreconditionFailed: "CONFLICT",
  ConditionalRequestConflict: "CONFLICT",
  OperationAborted: "CONFLICT",
  AccessDenied: "FORBIDDEN",
  Forbidden: "FORBIDDEN",
  SignatureDoesNotMatch: "FORBIDDEN",
  InvalidAccessKeyId: "FORBIDDEN",
  RequestTimeTooSkewed: "FORBIDDEN",
  AllAccessDisabled: "FORBIDDEN",
  ExpiredToken: "EXPIRED",
  TokenRefreshRequired: "EXPIRED",
  EntityTooLarge: "TOO_LARGE",
  EntityTooSmall: "INVALID_INPUT",
  InvalidArgument: "INVALID_INPUT",
  InvalidRequest: "INVALID_INPUT",
  InvalidPart: "INVALID_INPUT",
  InvalidPartOrder: "INVALID_INPUT",
  KeyTooLongError: "INVALID_INPUT",
  MalformedXML: "INVALID_INPUT",
  BadDigest: "INTEGRITY",
  InvalidDigest: "INTEGRITY",
  XAmzContentSHA256Mismatch: "INTEGRITY",
  QuotaExceeded: "STORAGE_FULL",
  SlowDown: "UNAVAILABLE",
  ServiceUnavailable: "UNAVAILABLE",
  InternalError: "UNAVAILABLE",
  RequestTimeout: "UNAVAILABLE",
};

function codeForStatus(status: number): StowageErrorCode {
  if (status === 404) return "NOT_FOUND";
  if (status === 401) return "UNAUTHORIZED";
  if (status === 403) return "FORBIDDEN";
  if (status === 409 || status === 412) return "CONFLICT";
  if (status === 413) return "TOO_LARGE";
  if (status === 429 || status >= 500) return "UNAVAILABLE";
  if (status >= 400) return "INVALID_INPUT";
  return "INTERNAL";
}

interface S3ErrorLike {
  name: string;
  message?: string;
  $metadata: { httpStatusCode: number; requestId?: string };
}

// An answer from the server has a status; the SDK also puts `$metadata` (without one) on
// network errors such as ECONNREFUSED, which map by errno instead.
function isS3ServiceError(err: unknown): err is S3ErrorLike {
  if (typeof err !== "object" || err === null || typeof (err as { name?: unknown }).name !== "string")
    return false;
  const metadata = (err as { $metadata?: { httpStatusCode?: unknown } }).$metadata;
  return typeof metadata === "object" && metadata !== null && typeof metadata.httpStatusCode === "number";
}

/** True when S3 answered 404 (a missing key on GET/HEAD). */
export function isS3NotFound(err: unknown): boolean {
  if (!isS3ServiceError(err)) return false;
  return err.name === "NoSuchKey" || err.name === "NotFound" || err.$metadata.httpStatusCode === 404;
}

/** True when S3 refused a conditional write because the key exists (`If-None-Match: *`). */
export function isS3PreconditionFailed(err: unknown): boolean {
  if (!isS3ServiceError(err)) return false;
  return err.name === "PreconditionFailed" || err.$metadata.httpStatusCode === 412;
}

/** True when AWS asks to retry a conditional write that raced another one (409). */
export function isS3ConditionalConflict(err: unknown): boolean {
  if (!isS3ServiceError(err)) return false;
  return err.name === "ConditionalRequestConflict" || err.$metadata.httpStatusCode === 409;
}

/**
 * Map anything an S3 call threw to a StowageError, at the edge: the S3 error code decides (with
 * the HTTP status as a fallback), network failures map by errno (`ECONNREFUSED` → UNAVAILABLE).
 * `reason` carries the S3 code, `details` the status and request id. `context` says what was
 * being done, e.g. `s3 put "a/b"`.
 */
export function fromS3Error(err: unknown, context: string): StowageError {
  if (StowageError.is(err)) return err;
  if (isS3ServiceError(err)) {
    const status = err.$metadata.httpStatusCode;
    const code = CODE_BY_S3_ERROR[err.name] ?? codeForStatus(status);
    const detail = err.message && err.message !== "UnknownError" ? `: ${err.message}` : "";
    return new StowageError(code, `${context}: S3 ${err.name} (HTTP ${status})${detail}`, {
      cause: err,
      reason: err.name,
      details: { status, ...(err.$metadata.requestId ? { requestId: err.$metadata.requestId } : {}) },
    });
  }
  // The SDK's own request timeout is the server being slow, not the caller cancelling.
  if (err instanceof Error && err.name === "TimeoutError") {
    return new StowageError("UNAVAILABLE", `${context}: S3 request timed out`, { cause: err });
  }
  return fromSystemError(err, context);
}
