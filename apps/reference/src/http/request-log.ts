import type { MiddlewareHandler } from "hono";

export interface RequestLogger {
  info(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** One JSON object per line on stdout (stderr for errors), for log collectors. */
export function jsonLogger(write: (line: string, isError: boolean) => void = defaultWrite): RequestLogger {
  const emit = (level: string, message: string, fields?: Record<string, unknown>) =>
    write(JSON.stringify({ time: new Date().toISOString(), level, message, ...fields }), level === "error");
  return {
    info: (message, fields) => emit("info", message, fields),
    error: (message, fields) => emit("error", message, fields),
  };
}

function defaultWrite(line: string, isError: boolean): void {
  (isError ? process.stderr : process.stdout).write(`${line}\n`);
}

/** Logs method, path, status and duration of every request (never its body or credentials). */
export function requestLog(log: RequestLogger): MiddlewareHandler {
  return async (c, next) => {
    const started = performance.now();
    await next();
    log.info("request", {
      method: c.req.method,
      path: new URL(c.req.url).pathname,
      status: c.res.status,
      ms: Math.round(performance.now() - started),
      ...(c.get("principalId" as never) ? { principal: c.get("principalId" as never) } : {}),
    });
  };
}
