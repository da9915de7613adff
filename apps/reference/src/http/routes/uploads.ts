import { StowageError } from "@stowage/core";
import { ARTIFACT_UPLOAD_URL_PATH } from "@stowage/storage-s3";
import { Hono } from "hono";
import type { Services } from "../../services.js";
import { type AppEnv, jsonBody, requireKey } from "../context.js";

function field(body: Record<string, unknown>, name: string): unknown {
  return body[name];
}

/** Presigned (or app-signed) artifact uploads for agents, and the session registration they need. */
export function uploadRoutes(services: Services) {
  const app = new Hono<AppEnv>();
  app.use("/agents/*", requireKey(services));

  // A session belongs to whoever registers it first; uploads need a registered session.
  app.post("/agents/sessions", async (c) => {
    const body = (await jsonBody(c)) as Record<string, unknown> | null;
    const sessionId = body?.sessionId;
    await services.owners.claim(sessionId as string, c.get("principal"));
    return c.json({ sessionId, owner: c.get("principal") }, 201);
  });

  app.post(ARTIFACT_UPLOAD_URL_PATH, async (c) => {
    const body = (await jsonBody(c)) as Record<string, unknown> | null;
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      throw new StowageError("INVALID_INPUT", "body must be a JSON object");
    }
    const sha256 = field(body, "sha256");
    const grant = await services.uploads.requestUpload(
      {
        principal: c.get("principal"),
        sessionId: field(body, "agentSessionId") as string,
        filename: field(body, "filename") as string,
        contentType: field(body, "contentType") as string,
        fileSize: field(body, "fileSize") as number,
        ...(sha256 === undefined ? {} : { sha256: sha256 as string }),
      },
      { signal: c.req.raw.signal },
    );
    return c.json(grant);
  });

  app.get("/agents/:sessionId/artifacts", async (c) => {
    const artifacts = await services.uploads.listArtifacts(c.get("principal"), c.req.param("sessionId"), {
      signal: c.req.raw.signal,
    });
    return c.json({ artifacts });
  });

  app.get("/agents/:sessionId/artifacts/:filename/download", async (c) => {
    const grant = await services.uploads.requestDownload(
      c.get("principal"),
      c.req.param("sessionId"),
      c.req.param("filename"),
      { signal: c.req.raw.signal },
    );
    return c.json(grant);
  });

  // The file-system backend's signed URLs: the signature is the authorization.
  app.all("/direct/*", (c) => services.objects.handleDirectRequest!(c.req.raw));
  return app;
}
