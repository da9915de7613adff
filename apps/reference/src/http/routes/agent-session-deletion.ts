import { Hono } from "hono";
import type { Services } from "../../services.js";
import type { AppEnv } from "../context.js";
import { DISPATCHER_TOKEN_HEADER, dispatcherTokenOf } from "./dispatcher-token.js";

/**
 * `DELETE /agents/sessions/:sessionId`: deletes a session of the caller from every store of the
 * deployment's table (`stowage.deleteSession`: the design document's "deleting a session removes
 * all its uploaded artifacts", and the rest the app keeps per session), its registration last.
 * Answers `{ sessionId, <store>: what it removed… }`. Another principal's session, or none, is 404.
 * A claimed session needs its dispatcher's token in {@link DISPATCHER_TOKEN_HEADER}. The caller's
 * deletion audit (`GET /audit`) gets its rows, by `key:<keyId>`.
 */
export function agentSessionDeletionRoutes(services: Pick<Services, "stowage">) {
  const app = new Hono<AppEnv>();
  app.delete("/agents/sessions/:sessionId", async (c) => {
    const token = dispatcherTokenOf(c);
    const { sessionId, deleted } = await services.stowage.deleteSession(
      c.get("principal"),
      c.req.param("sessionId"),
      {
        signal: c.req.raw.signal,
        // The deletion audit's "who": the key the request came with.
        by: `key:${c.get("keyId")}`,
        ...(token === undefined ? {} : { dispatcherToken: token }),
      },
    );
    return c.json({ sessionId, ...deleted });
  });
  return app;
}
