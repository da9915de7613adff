import {
  type ErrorBody,
  HTTP_STATUS_BY_CODE,
  STOWAGE_ERROR_CODES,
  StowageError,
  type StowageErrorCode,
} from "./errors.js";

/** Most bytes of an error response body read back; the rest is ignored. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

const codes: ReadonlySet<string> = new Set(STOWAGE_ERROR_CODES);

/** The wire body of any error: a StowageError as it is, anything else as a bare INTERNAL. */
export function errorBody(err: unknown): ErrorBody {
  return StowageError.is(err) ? err.toJSON() : { error: "internal error", code: "INTERNAL" };
}

/**
 * The HTTP response for an error, in the one wire format: status from `HTTP_STATUS_BY_CODE`, a
 * `retry-after` header where the error says when to come back (`details.retryAfterSeconds`).
 * Anything that is not a StowageError is answered as INTERNAL without internals; log it first.
 */
export function errorResponse(err: unknown): Response {
  const body = errorBody(err);
  const headers: Record<string, string> = {};
  const retryAfter = body.details?.retryAfterSeconds;
  if (typeof retryAfter === "number" && Number.isFinite(retryAfter) && retryAfter >= 0) {
    headers["retry-after"] = String(Math.ceil(retryAfter));
  }
  return Response.json(body, { status: HTTP_STATUS_BY_CODE[body.code], headers });
}

/** The code an HTTP status stands for when the body says nothing usable. */
function codeForStatus(status: number): StowageErrorCode {
  if (status === 401) return "UNAUTHORIZED";
  if (status === 403) return "FORBIDDEN";
  if (status === 404) return "NOT_FOUND";
  if (status === 409) return "CONFLICT";
  if (status === 410) return "EXPIRED";
  if (status === 413) return "TOO_LARGE";
  if (status === 429) return "RATE_LIMITED";
  if (status >= 500) return "UNAVAILABLE";
  if (status >= 400) return "INVALID_INPUT";
  return "INTERNAL";
}

async function boundedText(response: Response): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < MAX_ERROR_BODY_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } catch {
    // A body that breaks off still leaves the status to go by.
  } finally {
    reader.cancel().catch(() => {});
  }
  return Buffer.concat(chunks).subarray(0, MAX_ERROR_BODY_BYTES).toString("utf8");
}

/**
 * The StowageError a wire body stands for (`{ error, code, reason?, details? }`, as parsed from
 * JSON, e.g. what an MCP error carries), or undefined when `value` is not one. `context` (e.g.
 * `POST /blobs`) starts the message.
 */
export function errorFromBody(value: unknown, context?: string): StowageError | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const { error, code, reason, details } = value as Partial<Record<keyof ErrorBody, unknown>>;
  if (typeof error !== "string" || typeof code !== "string" || !codes.has(code)) return undefined;
  const prefix = context === undefined ? "" : `${context}: `;
  return new StowageError(code as StowageErrorCode, `${prefix}${error}`, {
    ...(typeof reason === "string" ? { reason } : {}),
    ...(typeof details === "object" && details !== null
      ? { details: details as Record<string, unknown> }
      : {}),
  });
}

function parsedJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The StowageError a failed response of a Stowage server carries (the wire format of
 * {@link errorResponse}); a body in any other shape gives a code from the status alone.
 * `context` (e.g. `POST /blobs`) starts the message.
 */
export async function errorFromResponse(response: Response, context?: string): Promise<StowageError> {
  const fromBody = errorFromBody(parsedJson(await boundedText(response)), context);
  if (fromBody) return fromBody;
  const prefix = context === undefined ? "" : `${context}: `;
  const status = `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}`;
  return new StowageError(codeForStatus(response.status), `${prefix}${status}`, {
    details: { status: response.status },
  });
}
