import { StowageError, errorResponse as wireErrorResponse } from "@stowage/core";
import type { RequestLogger } from "./request-log.js";

/** What a server path in an error becomes before it leaves: the client learns nothing of the host's layout. */
const REDACTED_PATH = "<data dir>";

function redact(value: unknown, path: string): unknown {
  if (typeof value === "string") return value.split(path).join(REDACTED_PATH);
  if (Array.isArray(value)) return value.map((item) => redact(item, path));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, redact(item, path)]));
  }
  return value;
}

/**
 * Every error leaves in core's one wire format, `{ error, code, reason?, details? }`, with the
 * status of its code, and with the data directory's absolute path taken out of its message and
 * details (a file-system error names the file it failed on). Anything that is not a StowageError
 * is a bug: logged, and answered with a generic INTERNAL so that no internal detail leaks.
 */
export function errorResponse(err: unknown, dataDir: string, log?: RequestLogger): Response {
  if (!StowageError.is(err)) {
    log?.error({ error: err instanceof Error ? err.stack : String(err) }, "unhandled error");
    return wireErrorResponse(err);
  }
  const message = redact(err.message, dataDir) as string;
  const details =
    err.details === undefined ? undefined : (redact(err.details, dataDir) as Record<string, unknown>);
  if (message === err.message && details === err.details) return wireErrorResponse(err);
  return wireErrorResponse(
    new StowageError(err.code, message, {
      ...(err.reason === undefined ? {} : { reason: err.reason }),
      ...(details === undefined ? {} : { details }),
    }),
  );
}

/**
 * A response a mounted package handler made (the upload API, signed URLs), its error body taken
 * through the same redaction as the app's own errors. Successful answers pass untouched.
 */
export async function withoutDataDir(response: Response, dataDir: string): Promise<Response> {
  if (response.ok || !response.headers.get("content-type")?.startsWith("application/json")) return response;
  const text = await response.text();
  // The path as JSON spells it inside a string (a Windows path's backslashes are escaped there).
  const redacted = text.split(JSON.stringify(dataDir).slice(1, -1)).join(REDACTED_PATH);
  const headers = new Headers(response.headers);
  headers.delete("content-length");
  return new Response(redacted, { status: response.status, statusText: response.statusText, headers });
}
