import { StowageError } from "@stowage/core";
import { buildBootstrapContext, createArtifactsGetTool, toAnthropicTool } from "@stowage/hot-state";
import { Hono } from "hono";
import type { Services } from "../../services.js";
import { type AppEnv, jsonBody } from "../context.js";
import { BOOTSTRAP_JSON_BODY, SMALL_JSON_BODY } from "../limits.js";

/**
 * Prompt context with content refs: large bootstrap files are stored in the caller's content
 * registry and sent as `ArtifactRef` lines (the design document's wire name; on with
 * `STOWAGE_ARTIFACT_REFS`), and the `artifacts_get` tool reads them — the caller's refs only.
 */
export function contextRoutes(services: Services) {
  const app = new Hono<AppEnv>();

  app.post("/context/bootstrap", async (c) => {
    const body = (await jsonBody(c, BOOTSTRAP_JSON_BODY)) as { files?: unknown } | null;
    if (!Array.isArray(body?.files))
      throw new StowageError("INVALID_INPUT", "body must be { files: [{ path, content, mime? }] }");
    const { enabled, thresholdChars } = services.config.bootstrap;
    const context = await buildBootstrapContext(body.files, {
      registry: c.get("tenant").registry,
      enabled,
      thresholdChars,
      signal: c.req.raw.signal,
    });
    return c.json(context);
  });

  // The tool's definition (Anthropic format) and its execution, for an agent loop to call.
  app.get("/context/tools/artifacts_get", (c) =>
    c.json(toAnthropicTool(createArtifactsGetTool({ registry: c.get("tenant").registry }))),
  );
  app.post("/context/tools/artifacts_get", async (c) => {
    const tool = createArtifactsGetTool({ registry: c.get("tenant").registry });
    return c.json(await tool.execute((await jsonBody(c, SMALL_JSON_BODY)) as never));
  });
  return app;
}
