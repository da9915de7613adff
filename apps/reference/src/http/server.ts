import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { errorResponse, StowageError } from "@stowage/core";
import { countTokensExact } from "@stowage/hot-state";
import { type AppConfig, replicaWarnings } from "../config.js";
import { createServices, type Services } from "../services.js";
import { createHttpApp } from "./app.js";
import { jsonLogger, type RequestLogger } from "./request-log.js";

export interface RunningServer {
  url: string;
  port: number;
  services: Services;
  close(): Promise<void>;
}

/**
 * Binds the port first, then builds the services: with port 0 (tests, parallel demos) the public
 * URL that signed URLs are made for is only known once the socket is bound. Starts the sweep of
 * every store (`stowage.sweep`: expired session blobs, uploads past their retention); `close` stops everything.
 */
export async function startServer(
  config: AppConfig,
  options: { log?: RequestLogger } = {},
): Promise<RunningServer> {
  const log = options.log ?? jsonLogger();
  let handle: ((request: Request, env: unknown) => Response | Promise<Response>) | undefined;
  const server = serve({
    fetch: (request, env) =>
      handle
        ? handle(request, env)
        : errorResponse(new StowageError("UNAVAILABLE", "the server is starting; retry in a moment")),
    port: config.port,
    hostname: config.host,
  });
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve);
    server.once("error", (err: NodeJS.ErrnoException) =>
      reject(
        err.code === "EADDRINUSE"
          ? new StowageError(
              "UNAVAILABLE",
              `port ${config.port} on ${config.host} is in use; set STOWAGE_PORT`,
              {
                cause: err,
              },
            )
          : err,
      ),
    );
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${config.host}:${port}`;
  const stopServer = () =>
    new Promise<void>((resolve) => {
      (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      server.close(() => resolve());
    });

  let services: Services;
  try {
    services = await createServices(config.port === 0 ? { ...config, port, publicUrl: url } : config);
  } catch (err) {
    await stopServer();
    throw err;
  }
  // The tokenizer's vocabulary takes a few hundred milliseconds to load: here, while requests are
  // still answered "starting", not in the first request that counts, holding every other one.
  countTokensExact("");
  handle = createHttpApp(services, log).fetch;
  for (const warning of replicaWarnings(config)) log.error("not safe to run as replicas", { warning });

  // Every store's expiry and retention (the deployment's table says which): each logged on its own.
  const sweep = async () => {
    for (const [store, outcome] of Object.entries(await services.stowage.sweep())) {
      if ("failed" in outcome) log.error("sweep failed", { store, error: (outcome.failed as Error).message });
      else if (outcome.removed > 0) log.info("swept", { store, removed: outcome.removed });
    }
  };
  const timer = setInterval(sweep, config.sweepIntervalMs);
  timer.unref();
  return {
    url,
    port,
    services,
    async close() {
      clearInterval(timer);
      await stopServer();
      await services.close();
    },
  };
}
