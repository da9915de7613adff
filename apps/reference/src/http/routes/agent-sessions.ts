import type { InternalResource } from "@stowage/artifacts";
import { StowageError } from "@stowage/core";
import { Hono } from "hono";
import { type AppContext, type AppEnv, integerQuery } from "../context.js";

/** The headers of a read answered as text: what the JSON form carries beside `text`. */
export const READ_HEADERS = {
  url: "x-stowage-url",
  complete: "x-stowage-complete",
  firstLine: "x-stowage-first-line",
  lastLine: "x-stowage-last-line",
  hasMore: "x-stowage-has-more",
  totalLines: "x-stowage-total-lines",
} as const;

/**
 * A read as the caller asked for it: JSON (`{ url, scheme, id, contentType, text, complete,
 * lines? }`, the default) or, with `?format=text`, the text itself as the body in its own content
 * type and the rest in headers: no JSON-escaped copy of up to a read's 16 MiB, and a client can
 * pipe it as it arrives.
 */
function answer(c: AppContext, read: InternalResource): Response {
  const format = c.req.query("format") ?? "json";
  if (format === "json") return c.json(read);
  if (format !== "text") {
    throw new StowageError("INVALID_INPUT", `format must be json or text, got ${JSON.stringify(format)}`);
  }
  const { lines } = read;
  return new Response(read.text, {
    headers: {
      "content-type": `${read.contentType}; charset=utf-8`,
      "x-content-type-options": "nosniff",
      [READ_HEADERS.url]: encodeURI(read.url),
      [READ_HEADERS.complete]: String(read.complete),
      ...(lines
        ? {
            [READ_HEADERS.firstLine]: String(lines.first),
            [READ_HEADERS.lastLine]: String(lines.last),
            [READ_HEADERS.hasMore]: String(lines.hasMore),
            ...(lines.totalLines === undefined
              ? {}
              : { [READ_HEADERS.totalLines]: String(lines.totalLines) }),
          }
        : {}),
    },
  });
}

/** The caller's agent sessions, and `artifact://` / `agent://` reads of one, with line paging. */
export function agentSessionRoutes() {
  const app = new Hono<AppEnv>();

  app.get("/sessions", async (c) => {
    const sessions = await c.get("tenant").agentSessions.list({ signal: c.req.raw.signal });
    return c.json({ sessions: sessions.map(({ sessionId, startedAt }) => ({ sessionId, startedAt })) });
  });

  app.get("/sessions/:id", async (c) => {
    const session = await c.get("tenant").agentSessions.get(c.req.param("id"), { signal: c.req.raw.signal });
    const [artifacts, agentOutputs] = await Promise.all([
      session.artifacts.listArtifacts(),
      session.artifacts.listAgentOutputs(),
    ]);
    return c.json({ sessionId: session.sessionId, startedAt: session.startedAt, artifacts, agentOutputs });
  });

  app.get("/sessions/:id/artifact/:n", async (c) => {
    const session = await c.get("tenant").agentSessions.get(c.req.param("id"), { signal: c.req.raw.signal });
    const offset = integerQuery(c, "offset");
    const limit = integerQuery(c, "limit");
    const read = await session.router.read(`artifact://${c.req.param("n")}`, {
      ...(offset === undefined ? {} : { offset }),
      ...(limit === undefined ? {} : { limit }),
      signal: c.req.raw.signal,
    });
    return answer(c, read);
  });

  // agent://<id>, agent://<id>/a/b/0 (JSON path) and agent://<id>?q=.a.b[0] (query).
  app.get("/sessions/:id/agent/*", async (c) => {
    const session = await c.get("tenant").agentSessions.get(c.req.param("id"), { signal: c.req.raw.signal });
    const url = new URL(c.req.url);
    const prefix = `/sessions/${encodeURIComponent(c.req.param("id"))}/agent/`;
    const rest = url.pathname.startsWith(prefix) ? url.pathname.slice(prefix.length) : "";
    const query = url.searchParams.get("q");
    const offset = integerQuery(c, "offset");
    const limit = integerQuery(c, "limit");
    // The rest of the path goes to the router as sent: it parses (and refuses) encoded ids itself.
    const read = await session.router.read(
      `agent://${rest}${query === null ? "" : `?q=${encodeURIComponent(query)}`}`,
      {
        ...(offset === undefined ? {} : { offset }),
        ...(limit === undefined ? {} : { limit }),
        signal: c.req.raw.signal,
      },
    );
    return answer(c, read);
  });
  return app;
}
