import { StowageError } from "@stowage/core";
import { fromTransport, toTransport } from "@stowage/sessions";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { Services } from "../../services.js";
import { type AppEnv, jsonBody, requireKey } from "../context.js";
import { tooLarge } from "../limits.js";

/** Session blobs of ephemeral containers: stored per request, fetched for the follow-up run. */
export function sessionBlobRoutes(services: Services) {
  const app = new Hono<AppEnv>();
  app.use("/requests/*", requireKey(services));

  // The container's response: { sessionId, sessionBlob (base64), sessionCodec, sessionRawSizeBytes }.
  app.post(
    "/requests/:requestId/session-blobs",
    bodyLimit({
      maxSize: services.config.sessionBlobLimitBytes,
      onError: tooLarge(services.config.sessionBlobLimitBytes),
    }),
    async (c) => {
      const body = (await jsonBody(c)) as Record<string, unknown> | null;
      const archive = fromTransport(body);
      const agentType = body?.agentType ?? "claude-code";
      const record = await services.sessionBlobs.create(
        { requestId: c.req.param("requestId"), agentType: agentType as string, ...archive },
        { signal: c.req.raw.signal },
      );
      return c.json(
        {
          id: record.id,
          requestId: record.requestId,
          sessionId: record.sessionId,
          codec: record.codec,
          blobSizeBytes: record.blobSizeBytes,
          rawSizeBytes: record.rawSizeBytes,
          expiresAt: record.expiresAt,
        },
        201,
      );
    },
  );

  // The follow-up run's input: the latest live session of the request, in transport form.
  app.get("/requests/:requestId/session-blobs/latest", async (c) => {
    const latest = await services.sessionBlobs.getLatestForRequest(c.req.param("requestId"), {
      signal: c.req.raw.signal,
    });
    if (!latest)
      throw new StowageError("NOT_FOUND", `no live session for request ${c.req.param("requestId")}`);
    return c.json({
      ...toTransport(latest),
      agentType: latest.agentType,
      createdAt: latest.createdAt,
      expiresAt: latest.expiresAt,
    });
  });

  app.delete("/requests/:requestId/session-blobs", async (c) => {
    const deleted = await services.sessionBlobs.deleteForRequest(c.req.param("requestId"), {
      signal: c.req.raw.signal,
    });
    return c.json({ deleted });
  });
  return app;
}
