import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Principal } from "@stowage/core";
import { loadConfig } from "../../src/config.js";
import type { RequestLogger } from "../../src/http/request-log.js";
import { type RunningServer, startServer } from "../../src/http/server.js";
import { seedEmbeddedDatabase } from "./seed-embedded-database.js";

export const quietLog: RequestLogger = { info: () => {}, error: () => {} };

export interface TestApp {
  server: RunningServer;
  url: string;
  dataDir: string;
  /** A fresh API key for the principal. */
  keyFor(principal: Principal): Promise<string>;
  /** fetch against the app with an optional Bearer key and JSON body. */
  call(
    path: string,
    init?: {
      method?: string;
      key?: string;
      json?: unknown;
      body?: RequestInit["body"];
      headers?: Record<string, string>;
    },
  ): Promise<Response>;
  close(): Promise<void>;
}

/**
 * The app on a fresh data directory and a free port, with `env` on top of the embedded defaults
 * (and of `STOWAGE_TRASH_DAYS=0`).
 * Its embedded database starts as a copy of the run's migrated template
 * (seed-embedded-database.ts), not from initdb.
 */
export async function startTestApp(env: Record<string, string> = {}): Promise<TestApp> {
  const dataDir = await mkdtemp(join(tmpdir(), "stowage-app-"));
  if (env.DATABASE_URL === undefined) await seedEmbeddedDatabase(dataDir);
  // A deleted session is deleted at once unless a test says otherwise: most tests are of the
  // deletion itself; the trash before it is test/trash.test.ts's (which sets its own days).
  const config = await loadConfig(
    { STOWAGE_DATA_DIR: dataDir, STOWAGE_PORT: "0", STOWAGE_TRASH_DAYS: "0", ...env },
    dataDir,
  );
  const server = await startServer(config, { log: quietLog });
  return {
    server,
    url: server.url,
    dataDir,
    keyFor: async (principal) => (await server.services.apiKeys.issue(principal)).apiKey,
    call(path, init = {}) {
      // A connection per call: the app answers in this process, so a test that holds the event
      // loop past the server's keep-alive timeout (5 s) lets the server's idle timer close the
      // pooled connection its next request was already written to (ECONNRESET, seen in CI).
      const headers: Record<string, string> = { connection: "close", ...init.headers };
      if (init.key) headers.authorization = `Bearer ${init.key}`;
      if (init.json !== undefined) headers["content-type"] = "application/json";
      return fetch(`${server.url}${path}`, {
        method: init.method ?? (init.json !== undefined || init.body !== undefined ? "POST" : "GET"),
        headers,
        ...(init.json !== undefined
          ? { body: JSON.stringify(init.json) }
          : init.body !== undefined
            ? { body: init.body }
            : {}),
      });
    },
    async close() {
      await server.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** The `code` of an error response in the one wire format (`{ error, code, … }`). */
export async function errorCode(response: Response): Promise<string | undefined> {
  const body = (await response.json().catch(() => null)) as { error?: unknown; code?: string } | null;
  return typeof body?.error === "string" ? body.code : undefined;
}
