import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expectStowageError } from "@stowage/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeConfig, loadConfig, replicaWarnings } from "../src/config.js";

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
      database: undefined,
      s3: undefined,
      uploadPolicy: { maxFileSizeBytes: 50 * 1024 * 1024, maxTotalSizeBytes: 500 * 1024 * 1024 },
      // Files over maxInlineArtifactChars (2,000) go by ref: the two defaults agree.
      bootstrap: { enabled: false, thresholdChars: 2001 },
      sessionTtlMs: 7 * 86_400_000,
    });
    expect(first.signingSecret.length).toBeGreaterThanOrEqual(32);
    expect((await loadConfig({}, dir)).signingSecret).toBe(first.signingSecret);
    const lines = describeConfig(first).join("\n");
    expect(lines).toContain("database: embedded PGlite");
    expect(lines).toContain("uploads: signed URLs served by this app at http://127.0.0.1:8787/direct");
  });

  it("lists every invalid setting at once, each read by the package it belongs to", async () => {
    const err = await expectStowageError(
      loadConfig(
        {
          STOWAGE_PORT: "99999",
          DATABASE_URL: "not a url",
          ARTIFACT_MAX_FILE_SIZE_MB: "-3",
          STOWAGE_SIGNING_SECRET: "short",
          STOWAGE_ARTIFACT_REFS: "maybe",
          S3_FORCE_PATH_STYLE: "sometimes",
          S3_BUCKET: "b",
        },
        dir,
      ),
      "INVALID_INPUT",
      "INVALID_SETTING",
    );
    expect(new Set(err.details?.settings as string[])).toEqual(
      new Set([
        "STOWAGE_PORT",
        "STOWAGE_SIGNING_SECRET",
        "DATABASE_URL",
        "ARTIFACT_MAX_FILE_SIZE_MB",
        "STOWAGE_ARTIFACT_REFS",
        "S3_FORCE_PATH_STYLE",
      ]),
    );
  });

  it("refuses values a package would refuse, even where a looser parser would pass them", async () => {
    for (const env of [
      { ARTIFACT_MAX_FILE_SIZE_MB: "1e3" },
      { STOWAGE_ARTIFACT_REFS_THRESHOLD_CHARS: "8k" },
      { DATABASE_URL: "mysql://db/x" },
      { STOWAGE_RATE_LIMIT_PER_MINUTE: "10.5" },
    ]) {
      await expectStowageError(loadConfig(env, dir), "INVALID_INPUT", "INVALID_SETTING");
    }
  });

  it.each([
    ["a bucket with a space", { S3_BUCKET: "my bucket" }, ["S3_BUCKET"]],
    ["a bucket with a slash", { S3_BUCKET: "a/b" }, ["S3_BUCKET"]],
    ["a proxy count that is no number", { STOWAGE_TRUST_PROXY: "yes" }, ["STOWAGE_TRUST_PROXY"]],
    ["too many proxies", { STOWAGE_TRUST_PROXY: "11" }, ["STOWAGE_TRUST_PROXY"]],
  ])("reports %s as a setting, never at start-up", async (_why, env, settings) => {
    const err = await expectStowageError(loadConfig(env, dir), "INVALID_INPUT", "INVALID_SETTING");
    expect(err.details?.settings).toEqual(settings);
  });

  it("reads how many reverse proxies are trusted (default none)", async () => {
    expect((await loadConfig({}, dir)).trustedProxies).toBe(0);
    const config = await loadConfig({ STOWAGE_TRUST_PROXY: "2" }, dir);
    expect(config.trustedProxies).toBe(2);
    expect(describeConfig(config).join("\n")).toContain("X-Forwarded-For behind 2 proxies");
  });

  it("reads the MCP session table's caps, leaving @stowage/mcp's defaults where unset", async () => {
    expect((await loadConfig({}, dir)).mcpSessions).toEqual({});
    const config = await loadConfig(
      {
        STOWAGE_MCP_MAX_SESSIONS: "64",
        STOWAGE_MCP_MAX_SESSIONS_PER_PRINCIPAL: "4",
        STOWAGE_MCP_SESSION_IDLE_MINUTES: "5",
      },
      dir,
    );
    expect(config.mcpSessions).toEqual({ maxSessions: 64, maxSessionsPerOwner: 4, idleMs: 5 * 60_000 });
    const err = await expectStowageError(
      loadConfig({ STOWAGE_MCP_MAX_SESSIONS: "0", STOWAGE_MCP_SESSION_IDLE_MINUTES: "1.5" }, dir),
      "INVALID_INPUT",
      "INVALID_SETTING",
    );
    expect(err.details?.settings).toEqual(["STOWAGE_MCP_MAX_SESSIONS", "STOWAGE_MCP_SESSION_IDLE_MINUTES"]);
  });

  it("warns that PostgreSQL without S3 is one process only (uploads on this host's disk)", async () => {
    const single = await loadConfig({ DATABASE_URL: "postgres://db.internal/stowage" }, dir);
    expect(replicaWarnings(single)).toHaveLength(1);
    expect(describeConfig(single).join("\n")).toContain("WARNING: uploads are kept on this host's disk");
    const shared = await loadConfig(
      { DATABASE_URL: "postgres://db.internal/stowage", S3_BUCKET: "b", S3_REGION: "eu-west-1" },
      dir,
    );
    expect(replicaWarnings(shared)).toEqual([]);
    expect(replicaWarnings(await loadConfig({}, dir))).toEqual([]);
  });

  it("requires the whole S3 configuration once S3_ENDPOINT is set", async () => {
    const err = await expectStowageError(
      loadConfig({ S3_ENDPOINT: "http://127.0.0.1:7480" }, dir),
      "INVALID_INPUT",
      "INVALID_SETTING",
    );
    expect(err.details?.settings).toEqual(["S3_BUCKET"]);
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
    expect(lines).toContain("uploads: S3 presigned URLs (bucket artifacts at http://127.0.0.1:7480)");
    expect(lines).not.toContain("hunter2");
    expect(lines).not.toContain("secret-key");
  });
});
