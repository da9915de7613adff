import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compressChunks, toTransport } from "@stowage/sessions";
import { runChild } from "@stowage/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Replica, startReplica } from "./support/replica.js";
import { seedEmbeddedDatabase } from "./support/seed-embedded-database.js";

const cli = new URL("../src/bin.ts", import.meta.url);

// Embedded PGlite allows one process per data directory: a second one must fail loudly and
// explain itself, never write beside the first and lose rows.
describe("two processes on one embedded data directory", () => {
  let dir: string;
  let server: Replica;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "stowage-lock-"));
    await seedEmbeddedDatabase(dir);
    // No DATABASE_URL or S3: the embedded defaults.
    const embedded = Object.fromEntries(
      Object.entries(process.env).filter(
        ([name]) => !name.startsWith("S3_") && !name.startsWith("DATABASE_"),
      ),
    ) as Record<string, string>;
    server = await startReplica(dir, { ...embedded, ISSUE_KEY_FOR: "user:locked" });
  });
  afterAll(async () => {
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("the CLI refuses to open the data directory the server holds, and the server loses nothing", async () => {
    const raw = new TextEncoder().encode(
      `${JSON.stringify({ type: "user", content: "stored before the CLI tried" })}\n`,
    );
    const stored = await fetch(`${server.url}/requests/lock-req/session-blobs`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
      body: JSON.stringify(
        toTransport({
          sessionId: "2f9c8a31-7b5e-4d2a-9c1f-0e6d5b4a3c21",
          codec: "gzip",
          blob: await compressChunks("gzip", [raw]),
          rawSizeBytes: raw.byteLength,
        }),
      ),
    });
    expect(stored.status).toBe(201);

    const env = { ...process.env, STOWAGE_DATA_DIR: dir } as NodeJS.ProcessEnv;
    delete env.DATABASE_URL;
    for (const name of Object.keys(env)) if (name.startsWith("S3_")) delete env[name];
    const result = await runChild(cli, ["session", "restore", "--user", "locked", "--request", "lock-req"], {
      env,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("in use by another process");
    expect(result.stderr).toContain("stop it first, or do this through its HTTP API");

    const latest = await fetch(`${server.url}/requests/lock-req/session-blobs/latest`, {
      headers: { authorization: `Bearer ${server.key}` },
    });
    expect(latest.status).toBe(200);
  });
});
