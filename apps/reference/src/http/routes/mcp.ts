import { createMcpHttpSessions, createStowageMcpServer } from "@stowage/mcp";
import { openAgentSession } from "@stowage/tenancy/shared";
import { Hono } from "hono";
import type { Services } from "../../services.js";
import type { AppEnv } from "../context.js";

/**
 * MCP over Streamable HTTP for one of the caller's agent sessions, behind the same API keys as
 * every route: the server sees the caller's tenant only (its session, its blobs, its threads, its
 * content refs, its hot state), so another principal's session is NOT_FOUND, and an MCP session
 * answers only the principal that opened it. The session table is shared by every principal, so it
 * is capped per principal and a full one makes room from whoever holds the most, never refusing a
 * principal under its fair share (`createMcpHttpSessions`, caps from `config.mcpSessions`); batches
 * are refused, so one request (one token of the rate limit) is one message. `upload_artifact` is not
 * offered here: it reads a file path, and the server's files are not the client's (uploads go
 * through `/agents/artifacts/upload-url`). An MCP session is bound to the registration of its
 * agent session that it was opened under: once the session is deleted its MCP sessions answer 404,
 * also after the id is registered again, in every process (the registration's time is part of the
 * scope, read on every request).
 */
export function mcpRoutes(services: Services) {
  const sessions = createMcpHttpSessions(services.config.mcpSessions);
  const app = new Hono<AppEnv>();
  app.all("/mcp/sessions/:sessionId", async (c) => {
    const tenant = c.get("tenant");
    const sessionId = c.req.param("sessionId");
    // The registration an MCP session was opened under (or none, for a session only on disk).
    const registeredAt =
      (await tenant.registeredSessions.registeredAt(sessionId, { signal: c.req.raw.signal })) ?? "none";
    // A GET is the session's live notification stream: it counts against the key's streams,
    // as a thread's event stream does, until the client goes away.
    const release = c.req.method === "GET" ? services.limits.openStream(c.get("keyId")) : () => {};
    c.req.raw.signal.addEventListener("abort", release, { once: true });
    const response = await sessions
      .handle(c.req.raw, {
        owner: tenant.owner,
        scope: `${sessionId}@${registeredAt}`,
        createServer: async () =>
          createStowageMcpServer({
            session: await openAgentSession(tenant.registeredSessions, tenant.agentSessions, sessionId, {
              signal: c.req.raw.signal,
            }),
            blobs: tenant.blobs,
            threads: tenant.threads,
            registry: tenant.registry,
            hotState: tenant.hotState.reader,
            redactPaths: [services.config.dataDir],
          }),
      })
      .catch((err: unknown) => {
        release();
        throw err;
      });
    if (!response.body || c.req.method !== "GET") {
      release();
      return response;
    }
    // Released when the stream ends (the session closed) or the client disconnects (abort above).
    return new Response(response.body.pipeThrough(new TransformStream({ flush: release })), response);
  });
  return app;
}
