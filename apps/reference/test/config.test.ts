import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { StowageError } from "@stowage/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeConfig, loadConfig } from "../src/config.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "stowage-config-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("configuration", () => {
  it("defaults to embedded storage in ./.stowage and keeps one signing secret across restarts", async () => {
    const first = await loadConfig({}, dir);
    expect(first).toMatchObject({
      dataDir: join(dir, ".stowage"),
      host: "127.0.0.1",
      port: 8787,
      publicUrl: "http://127.0.0.1:8787",
      databaseUrl: undefined,
      s3: undefined,
      artifactMaxFileBytes: 50 * 1024 * 1024,
      artifactMaxTotalBytes: 500 * 1024 * 1024,
      sessionTtlMs: 7 * 86_400_000,
    });
    expect(first.signingSecret.length).toBeGreaterThanOrEqual(32);
    expect((await loadConfig({}, dir)).signingSecret).toBe(first.signingSecret);
    const lines = describeConfig(first).join("\n");
    expect(lines).toContain("database: embedded PGlite");
    expect(lines).toContain(
      "artifact uploads: signed URLs served by this app at http://127.0.0.1:8787/direct",
    );
  });

  it("lists every invalid setting at once", async () => {
    const err = await loadConfig(
      {
        STOWAGE_PORT: "99999",
        DATABASE_URL: "not a url",
        ARTIFACT_MAX_FILE_SIZE_MB: "-3",
        STOWAGE_SIGNING_SECRET: "short",
      },
      dir,
    ).catch((e: unknown) => e);
    expect(StowageError.is(err, "INVALID_INPUT")).toBe(true);
    for (const name of [
      "STOWAGE_PORT",
      "DATABASE_URL",
      "ARTIFACT_MAX_FILE_SIZE_MB",
      "STOWAGE_SIGNING_SECRET",
    ]) {
      expect((err as Error).message).toContain(name);
    }
  });

  it("requires the whole S3 configuration once S3_ENDPOINT is set", async () => {
    const err = await loadConfig({ S3_ENDPOINT: "http://127.0.0.1:7480" }, dir).catch((e: unknown) => e);
    expect(StowageError.is(err, "INVALID_INPUT")).toBe(true);
    expect((err as Error).message).toContain(
      "S3_BUCKET, S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY are required",
    );
  });

  it("prints what is in use without the database password", async () => {
    const config = await loadConfig(
      {
        DATABASE_URL: "postgres://app:hunter2@db.internal:5432/stowage",
        S3_ENDPOINT: "http://127.0.0.1:7480",
        S3_BUCKET: "artifacts",
        S3_ACCESS_KEY_ID: "AKIA",
        S3_SECRET_ACCESS_KEY: "secret-key",
      },
      dir,
    );
    const lines = describeConfig(config).join("\n");
    expect(lines).toContain("database: PostgreSQL at postgres://app:***@db.internal:5432/stowage");
    expect(lines).toContain("S3 presigned URLs (bucket artifacts at http://127.0.0.1:7480)");
    expect(lines).not.toContain("hunter2");
    expect(lines).not.toContain("secret-key");
  });
});
