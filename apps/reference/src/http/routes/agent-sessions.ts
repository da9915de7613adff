import { Hono } from "hono";
import type { Services } from "../../services.js";
import { type AppEnv, integerQuery, requireKey } from "../context.js";

/** `artifact://` and `agent://` reads of an agent session, with line paging. */
export function agentSessionRoutes(services: Services) {
  const app = new Hono<AppEnv>();
  app.use("/sessions", requireKey(services));
  app.use("/sessions/*", requireKey(services));

  app.get("/sessions", async (c) => {
    const sessions = await services.agentSessions.list();
    return c.json({ sessions: sessions.map(({ sessionId, startedAt }) => ({ sessionId, startedAt })) });
  });

  app.get("/sessions/:id", async (c) => {
    const session = await services.agentSessions.get(c.req.param("id"));
    const [artifacts, agentOutputs] = await Promise.all([
      session.artifacts.listArtifacts(),
      session.artifacts.listAgentOutputs(),
    ]);
    return c.json({ sessionId: session.sessionId, startedAt: session.startedAt, artifacts, agentOutputs });
  });

  app.get("/sessions/:id/artifact/:n", async (c) => {
    const session = await services.agentSessions.get(c.req.param("id"));
    const offset = integerQuery(c, "offset");
    const limit = integerQuery(c, "limit");
    const read = await session.router.read(`artifact://${c.req.param("n")}`, {
      ...(offset === undefined ? {} : { offset }),
      ...(limit === undefined ? {} : { limit }),
      signal: c.req.raw.signal,
    });
    return c.json(read);
  });

  // agent://<id>, agent://<id>/a/b/0 (JSON path) and agent://<id>?q=.a.b[0] (query).
  app.get("/sessions/:id/agent/*", async (c) => {
    const session = await services.agentSessions.get(c.req.param("id"));
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
    return c.json(read);
  });
  return app;
}
