import { HTTP_STATUS_BY_CODE, StowageError } from "@stowage/core";
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { RequestLogger } from "./request-log.js";

/**
 * Every error leaves as JSON `{ error: { code, message, reason?, details? } }` with the HTTP
 * status of its code. Anything that is not a StowageError is a bug: logged, and answered with a
 * generic INTERNAL so that no internal detail leaks.
 */
export function errorResponse(c: Context, err: unknown, log?: RequestLogger): Response {
  const error = StowageError.is(err) ? err : new StowageError("INTERNAL", "internal error");
  if (!StowageError.is(err))
    log?.error("unhandled error", { error: err instanceof Error ? err.stack : String(err) });
  return c.json({ error: error.toJSON() }, HTTP_STATUS_BY_CODE[error.code] as ContentfulStatusCode);
}
