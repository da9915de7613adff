import { StowageError } from "@stowage/core";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { observeRequests } from "../observability/http-observer.js";
import type { Services } from "../services.js";
import { viewerRoutes } from "../viewer/viewer-routes.js";
import { authenticate } from "./authenticate.js";
import { keepConnectionsUsable } from "./connection.js";
import type { AppEnv } from "./context.js";
import { createDrain, type Drain } from "./drain.js";
import { errorResponse } from "./errors.js";
import { tooLarge } from "./limits.js";
import { operatorRoutes } from "./operator-routes.js";
import { type RequestLogger, requestLog, withFields } from "./request-log.js";
import { agentSessionDeletionRoutes } from "./routes/agent-session-deletion.js";
import { agentSessionRoutes } from "./routes/agent-sessions.js";
import { blobRoutes } from "./routes/blobs.js";
import { contextRoutes } from "./routes/context.js";
import { deletionAuditRoutes } from "./routes/deletion-audit.js";
import { expiringRoutes } from "./routes/expiring.js";
import { hotStateRoutes } from "./routes/hot-state.js";
import { mcpRoutes } from "./routes/mcp.js";
import { sessionActivityRoutes } from "./routes/session-activity.js";
import { sessionBlobDeletionRoutes } from "./routes/session-blob-deletion.js";
import { sessionBlobListingRoutes } from "./routes/session-blob-listing.js";
import { sessionBlobRoutes } from "./routes/session-blobs.js";
import { storedSessionReaderRoutes } from "./routes/stored-session-reader.js";
import { threadRoutes } from "./routes/threads.js";
import { trashRoutes } from "./routes/trash.js";
import { uploadRoutes } from "./routes/uploads.js";

// Routes whose bodies are limited by their own rule: signed uploads (by the signature), blobs
// (by the file limit), session blobs (the raw form by the session limit, the JSON form by its
// JSON budget). Every other body is limited here, and a JSON body by its route's budget too
// (`limits.ts`).
const OWN_LIMIT = [/^\/direct\//, /^\/blobs$/, /^\/requests\/[^/]+\/session-blobs$/];

/** The HTTP API: thin routes over the packages, JSON errors with StowageError codes. */
export function createHttpApp(services: Services, log: RequestLogger, drain: Drain = createDrain()) {
  const { config } = services;
  const app = new Hono<AppEnv>();
  // The request's span and metrics around everything, its log line inside the span (its trace id).
  app.use(observeRequests(services.metrics));
  app.use(requestLog(log));
  // Outermost but the log: it sees every answer, refusals of the layers below included.
  app.use(keepConnectionsUsable());
  // What a stopping server still answers, and its event streams to end (`drain.ts`).
  app.use(drain.middleware());
  // /readyz and /metrics (its own token): an operator's, before any API key is looked at.
  app.route("/", operatorRoutes(services, drain));
  // Authentication, the caller's tenant and rate limits, in one place for every route.
  app.use(authenticate(services));
  const generalLimit = bodyLimit({
    maxSize: config.bodyLimitBytes,
    onError: tooLarge(config.bodyLimitBytes),
  });
  app.use(async (c, next) => {
    if (OWN_LIMIT.some((pattern) => pattern.test(c.req.path))) return next();
    return generalLimit(c, next);
  });
  app.onError((err, c) =>
    errorResponse(err, config.dataDir, withFields(log, { requestId: c.get("requestId" as never) })),
  );
  app.notFound((c) =>
    errorResponse(
      new StowageError("NOT_FOUND", `no route for ${c.req.method} ${c.req.path}`),
      config.dataDir,
    ),
  );

  app.get("/healthz", async (c) =>
    c.json({
      ok: true,
      database: services.database.driver,
      uploads: config.s3 ? "s3" : "fs-signed",
      shared: services.shared.name,
    }),
  );
  app.route("/", agentSessionDeletionRoutes(services)); // before the upload API's /agents/* handler
  app.route("/", uploadRoutes(services));
  app.route("/", sessionBlobRoutes(config, log));
  app.route("/", sessionBlobDeletionRoutes(services));
  app.route("/", sessionActivityRoutes());
  app.route("/", deletionAuditRoutes());
  app.route("/", expiringRoutes(services));
  app.route("/", trashRoutes(services));
  app.route("/", sessionBlobListingRoutes());
  app.route("/", storedSessionReaderRoutes());
  app.route("/", threadRoutes(services));
  app.route("/", blobRoutes(services));
  app.route("/", agentSessionRoutes());
  app.route("/", contextRoutes(services));
  app.route("/", hotStateRoutes());
  app.route("/", mcpRoutes(services));
  app.route("/", viewerRoutes());
  return app;
}
