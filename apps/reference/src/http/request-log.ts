import { randomUUID } from "node:crypto";
import { trace } from "@opentelemetry/api";
import type { MiddlewareHandler } from "hono";

/**
 * Where the server logs: pino's argument order, the fields first and then the message
 * (`log.info({ store }, "swept")`), so a pino logger (or any logger of that shape) fits as it is.
 */
export interface RequestLogger {
  info(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

/** The response header (and request header, from a proxy) carrying the request id. */
export const REQUEST_ID_HEADER = "x-request-id";

/** A request id a proxy sent, kept only when it is short and plain (it is echoed and logged). */
const FORWARDED_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** One JSON object per line on stdout (stderr for errors), for log collectors; pino's field names. */
export function jsonLogger(write: (line: string, isError: boolean) => void = defaultWrite): RequestLogger {
  const emit = (level: string, fields: Record<string, unknown>, message: string) =>
    write(
      JSON.stringify({ time: new Date().toISOString(), level, msg: message, ...fields }),
      level === "error",
    );
  return {
    info: (fields, message) => emit("info", fields, message),
    error: (fields, message) => emit("error", fields, message),
  };
}

function defaultWrite(line: string, isError: boolean): void {
  (isError ? process.stderr : process.stdout).write(`${line}\n`);
}

/** `log` with `fields` added to every line (pino's `child`, for any RequestLogger). */
export function withFields(log: RequestLogger, fields: Record<string, unknown>): RequestLogger {
  return {
    info: (more, message) => log.info({ ...fields, ...more }, message),
    error: (more, message) => log.error({ ...fields, ...more }, message),
  };
}

/**
 * Gives every request an id (a proxy's `x-request-id` when it is plain, else a new UUID), answers
 * it in `x-request-id`, and logs method, path, status, duration, principal, request id and trace
 * id of every request, never its body or credentials.
 */
export function requestLog(log: RequestLogger): MiddlewareHandler {
  return async (c, next) => {
    const started = performance.now();
    const forwarded = c.req.header(REQUEST_ID_HEADER);
    const requestId = forwarded && FORWARDED_REQUEST_ID.test(forwarded) ? forwarded : randomUUID();
    c.set("requestId" as never, requestId as never);
    const traceId = trace.getActiveSpan()?.spanContext().traceId;
    await next();
    try {
      c.res.headers.set(REQUEST_ID_HEADER, requestId);
    } catch {
      // A response whose headers are immutable (a fetched one passed through) goes out without it.
    }
    log.info(
      {
        requestId,
        ...(traceId && traceId !== "00000000000000000000000000000000" ? { traceId } : {}),
        method: c.req.method,
        path: new URL(c.req.url).pathname,
        status: c.res.status,
        ms: Math.round(performance.now() - started),
        ...(c.get("principalId" as never) ? { principal: c.get("principalId" as never) } : {}),
      },
      "request",
    );
  };
}
