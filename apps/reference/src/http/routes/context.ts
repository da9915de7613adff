import { StowageError } from "@stowage/core";
import { buildBootstrapContext, createArtifactsGetTool, toAnthropicTool } from "@stowage/hot-state";
import { Hono } from "hono";
import type { Services } from "../../services.js";
import { type AppEnv, jsonBody, requireKey } from "../context.js";

/**
 * Prompt context with artifact refs: large bootstrap files are stored in the registry and sent as
 * `ArtifactRef` lines (when `STOWAGE_ARTIFACT_REFS` is on), and the `artifacts_get` tool reads them.
 */
export function contextRoutes(services: Services) {
  const app = new Hono<AppEnv>();
  app.use("/context/*", requireKey(services));
  const tool = createArtifactsGetTool(services.registry);

  app.post("/context/bootstrap", async (c) => {
    const body = (await jsonBody(c)) as { files?: unknown } | null;
    if (!Array.isArray(body?.files))
      throw new StowageError("INVALID_INPUT", "body must be { files: [{ path, content, mime? }] }");
    const { enabled, thresholdChars } = services.config.artifactRefs;
    const context = await buildBootstrapContext(body.files, {
      registry: services.registry,
      enabled,
      thresholdChars,
      signal: c.req.raw.signal,
    });
    return c.json(context);
  });

  // The tool's definition (Anthropic format) and its execution, for an agent loop to call.
  app.get("/context/tools/artifacts_get", (c) => c.json(toAnthropicTool(tool)));
  app.post("/context/tools/artifacts_get", async (c) =>
    c.json(await tool.execute((await jsonBody(c)) as never)),
  );
  return app;
}
