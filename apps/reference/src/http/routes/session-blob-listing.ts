import { Hono } from "hono";
import { type AppEnv, integerQuery } from "../context.js";

/** Stored sessions per page when the caller gives no `limit`. */
const DEFAULT_PAGE = 100;

/**
 * `GET /session-blobs`: the caller's live stored sessions (what ephemeral containers left for a
 * follow-up run), without their blobs, in the order they were stored, a page at a time: what the
 * viewer lists with each one's agent type. `limit` (1 to 1,000) and `cursor` page it.
 */
export function sessionBlobListingRoutes() {
  const app = new Hono<AppEnv>();
  app.get("/session-blobs", async (c) => {
    const cursor = c.req.query("cursor");
    const page = await c.get("tenant").sessionBlobs.list({
      limit: integerQuery(c, "limit") ?? DEFAULT_PAGE,
      ...(cursor === undefined ? {} : { cursor }),
      signal: c.req.raw.signal,
    });
    return c.json({
      sessions: page.sessions.map((stored) => ({
        sessionId: stored.sessionId,
        requestId: stored.requestId,
        agentType: stored.agentType,
        codec: stored.codec,
        blobSizeBytes: stored.blobSizeBytes,
        rawSizeBytes: stored.rawSizeBytes,
        storedBytes: stored.storedBytes,
        createdAt: stored.createdAt,
        expiresAt: stored.expiresAt,
      })),
      ...(page.cursor === undefined ? {} : { cursor: page.cursor }),
    });
  });
  return app;
}
