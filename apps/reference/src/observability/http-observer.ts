import { context, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import type { MiddlewareHandler } from "hono";
import { routePath } from "hono/route";
import type { AppMetrics } from "./metrics.js";
import { sessionAttributes, tracer, withSession } from "./tracing.js";

/**
 * Where a path names the agent session it is about (a thread's job id is its session's id). Read
 * before the route runs, so the store operations the request makes carry the id too.
 */
const SESSION_IN_PATH = [
  /^\/sessions\/([^/]+)/,
  /^\/agents\/sessions\/([^/]+)/,
  /^\/agents\/([^/]+)\/artifacts(?:\/|$)/,
  /^\/mcp\/sessions\/([^/]+)/,
  /^\/session-blobs\/([^/]+)/,
  /^\/threads\/([^/]+)\/[^/]+/,
];

/** The session id a path names, decoded; undefined when it names none (or not decodably). */
export function sessionIdOfPath(path: string): string | undefined {
  for (const pattern of SESSION_IN_PATH) {
    const match = pattern.exec(path);
    if (!match) continue;
    try {
      return decodeURIComponent(match[1]!);
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/**
 * The route a request matched, as its pattern: metrics are labelled by it, never by the path (a
 * label per session id would grow without bound). A request no route matched is `unmatched`.
 */
function routeOf(c: Parameters<MiddlewareHandler>[0]): string {
  const route = routePath(c);
  return route === "/*" || route === "*" ? "unmatched" : route;
}

/**
 * One span per HTTP request (`<METHOD> <route>`, server kind, `session.id` and
 * `gen_ai.conversation.id` when the path names a session) around everything the request runs, and
 * its count and latency in the metrics. A stream's latency is the time to its headers.
 */
export function observeRequests(metrics: AppMetrics): MiddlewareHandler {
  return async (c, next) => {
    const started = performance.now();
    const path = c.req.path;
    const sessionId = sessionIdOfPath(path);
    const span = tracer().startSpan(`${c.req.method} ${path}`, {
      kind: SpanKind.SERVER,
      attributes: {
        "http.request.method": c.req.method,
        "url.path": path,
        ...sessionAttributes(sessionId),
      },
    });
    const active = withSession(trace.setSpan(context.active(), span), sessionId);
    try {
      await context.with(active, next);
    } finally {
      const route = routeOf(c);
      const status = c.res.status;
      span.updateName(`${c.req.method} ${route}`);
      span.setAttributes({ "http.route": route, "http.response.status_code": status });
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
      metrics.request({ method: c.req.method, route, status }, (performance.now() - started) / 1000);
    }
  };
}
