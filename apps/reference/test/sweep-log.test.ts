// The server's sweep on its own timer: one structured line per store per run (quiet runs too),
// and what it removed in the owner's deletion audit, by `ttl`.
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compressChunks, toTransport } from "@stowage/sessions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import type { RequestLogger } from "../src/http/request-log.js";
import { type RunningServer, startServer } from "../src/http/server.js";
import { seedEmbeddedDatabase } from "./support/seed-embedded-database.js";

interface Line {
  fields: Record<string, unknown>;
  msg: string;
}

describe("the server's sweep", () => {
  const lines: Line[] = [];
  const log: RequestLogger = {
    info: (fields: Record<string, unknown>, msg: string) => void lines.push({ fields, msg }),
    error: (fields: Record<string, unknown>, msg: string) => void lines.push({ fields, msg }),
  } as RequestLogger;
  let server: RunningServer;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "stowage-sweep-log-"));
    await seedEmbeddedDatabase(dataDir);
    // Stored sessions kept 2 seconds, then 1 second in their owner's trash, swept every second.
    const config = await loadConfig(
      {
        STOWAGE_DATA_DIR: dataDir,
        STOWAGE_PORT: "0",
        STOWAGE_SESSION_TTL_DAYS: String(2 / 86_400),
        STOWAGE_TRASH_DAYS: String(1 / 86_400),
        STOWAGE_SWEEP_INTERVAL_SECONDS: "1",
      },
      dataDir,
    );
    server = await startServer(config, { log });
  });
  afterAll(async () => {
    await server?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("logs one line per store per run, and the expired session's row goes to its owner's audit", async () => {
    const { apiKey } = await server.services.apiKeys.issue({ kind: "user", id: "swept" });
    const sessionId = randomUUID();
    const raw = new TextEncoder().encode(`${JSON.stringify({ type: "user", content: "hi" })}\n`);
    const blob = await compressChunks("gzip", [raw]);
    const stored = await fetch(`${server.url}/requests/req-swept/session-blobs`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: JSON.stringify(toTransport({ sessionId, codec: "gzip", blob, rawSizeBytes: raw.byteLength })),
    });
    expect(stored.status).toBe(201);
    const swept = () => lines.filter((line) => line.msg === "swept");
    const deadline = Date.now() + 30_000;
    while (
      !swept().some((line) => line.fields.store === "sessionBlobs" && line.fields.removed === 1) &&
      Date.now() < deadline
    ) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const removed = swept().find((line) => line.fields.store === "sessionBlobs" && line.fields.removed === 1);
    expect(removed?.fields).toEqual({ store: "sessionBlobs", removed: 1, durationMs: expect.any(Number) });
    // Quiet runs are logged too: the first run, before the session expired, removed nothing.
    expect(swept().some((line) => line.fields.store === "sessionBlobs" && line.fields.removed === 0)).toBe(
      true,
    );
    expect(swept().some((line) => line.fields.store === "uploads")).toBe(true);
    // The audit's own pruning runs once per process, on the first run.
    expect(swept().filter((line) => line.fields.store === "deletionAudit")).toHaveLength(1);
    const audit = (await (
      await fetch(`${server.url}/audit`, { headers: { authorization: `Bearer ${apiKey}` } })
    ).json()) as { rows: { kind: string; id: string; by: string }[] };
    expect(audit.rows).toEqual([expect.objectContaining({ kind: "sessionBlobs", id: sessionId, by: "ttl" })]);
  });
});
