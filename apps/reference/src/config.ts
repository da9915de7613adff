import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { StowageError } from "@stowage/core";
import { writeFileAtomic } from "@stowage/core/fs";
import { z } from "zod";

const flag = z
  .enum(["1", "0", "true", "false", "yes", "no", "on", "off"])
  .transform((value) => ["1", "true", "yes", "on"].includes(value));

/** Every setting, read from the environment. Unset means the embedded default. */
const EnvSchema = z.object({
  STOWAGE_DATA_DIR: z.string().min(1).default(".stowage"),
  STOWAGE_HOST: z.string().min(1).default("127.0.0.1"),
  STOWAGE_PORT: z.coerce.number().int().min(0).max(65_535).default(8787),
  STOWAGE_PUBLIC_URL: z.url().optional(),
  STOWAGE_SIGNING_SECRET: z.string().min(32, "must be at least 32 characters").optional(),
  DATABASE_URL: z.url().optional(),
  S3_ENDPOINT: z.url().optional(),
  S3_BUCKET: z.string().min(3).optional(),
  S3_ACCESS_KEY_ID: z.string().min(1).optional(),
  S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  S3_REGION: z.string().min(1).default("us-east-1"),
  ARTIFACT_MAX_FILE_SIZE_MB: z.coerce.number().positive().default(50),
  ARTIFACT_MAX_TOTAL_SIZE_MB: z.coerce.number().positive().default(500),
  STOWAGE_ARTIFACT_REFS: flag.default(false),
  STOWAGE_ARTIFACT_REFS_THRESHOLD_CHARS: z.coerce.number().int().positive().default(8000),
  STOWAGE_SESSION_TTL_DAYS: z.coerce.number().positive().default(7),
  STOWAGE_SWEEP_INTERVAL_SECONDS: z.coerce.number().int().positive().default(600),
  STOWAGE_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().positive().default(600),
  STOWAGE_BODY_LIMIT_MB: z.coerce.number().positive().default(16),
  STOWAGE_SESSION_BLOB_LIMIT_MB: z.coerce.number().positive().default(256),
});

export interface S3Config {
  endpoint: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
}

export interface AppConfig {
  dataDir: string;
  host: string;
  port: number;
  /** Base URL clients reach this app at; signed URLs are made for it. */
  publicUrl: string;
  signingSecret: string;
  databaseUrl: string | undefined;
  s3: S3Config | undefined;
  artifactMaxFileBytes: number;
  artifactMaxTotalBytes: number;
  artifactRefs: { enabled: boolean; thresholdChars: number };
  sessionTtlMs: number;
  sweepIntervalMs: number;
  rateLimitPerMinute: number;
  bodyLimitBytes: number;
  sessionBlobLimitBytes: number;
}

const MB = 1024 * 1024;

function problemsOf(error: z.ZodError): string {
  return error.issues.map((issue) => `  ${issue.path.join(".")}: ${issue.message}`).join("\n");
}

/**
 * The signing secret: from the environment, else the one kept in the data directory, else a new
 * one written there, so that signed URLs stay valid across restarts.
 */
async function signingSecretFor(dataDir: string, fromEnv: string | undefined): Promise<string> {
  if (fromEnv) return fromEnv;
  const path = join(dataDir, "signing-secret");
  try {
    const stored = (await readFile(path, "utf8")).trim();
    if (stored.length >= 32) return stored;
  } catch (err) {
    if ((err as { code?: string }).code !== "ENOENT") throw err;
  }
  const secret = randomBytes(32).toString("base64url");
  await writeFileAtomic(path, `${secret}\n`);
  return secret;
}

/** Validates every setting at once and fails with the full list of problems. */
export async function loadConfig(
  env: Record<string, string | undefined> = process.env,
  cwd = process.cwd(),
): Promise<AppConfig> {
  const parsed = EnvSchema.safeParse(
    Object.fromEntries(Object.entries(env).filter(([, value]) => value !== "")),
  );
  if (!parsed.success) {
    throw new StowageError("INVALID_INPUT", `invalid configuration:\n${problemsOf(parsed.error)}`);
  }
  const e = parsed.data;
  const s3Vars = [e.S3_BUCKET, e.S3_ACCESS_KEY_ID, e.S3_SECRET_ACCESS_KEY];
  if (e.S3_ENDPOINT && s3Vars.some((value) => value === undefined)) {
    throw new StowageError(
      "INVALID_INPUT",
      "invalid configuration:\n  S3_ENDPOINT is set, so S3_BUCKET, S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY are required",
    );
  }
  const dataDir = resolve(cwd, e.STOWAGE_DATA_DIR);
  return {
    dataDir,
    host: e.STOWAGE_HOST,
    port: e.STOWAGE_PORT,
    publicUrl: (e.STOWAGE_PUBLIC_URL ?? `http://${e.STOWAGE_HOST}:${e.STOWAGE_PORT}`).replace(/\/+$/, ""),
    signingSecret: await signingSecretFor(dataDir, e.STOWAGE_SIGNING_SECRET),
    databaseUrl: e.DATABASE_URL,
    s3: e.S3_ENDPOINT
      ? {
          endpoint: e.S3_ENDPOINT,
          bucket: e.S3_BUCKET!,
          accessKeyId: e.S3_ACCESS_KEY_ID!,
          secretAccessKey: e.S3_SECRET_ACCESS_KEY!,
          region: e.S3_REGION,
        }
      : undefined,
    artifactMaxFileBytes: Math.floor(e.ARTIFACT_MAX_FILE_SIZE_MB * MB),
    artifactMaxTotalBytes: Math.floor(e.ARTIFACT_MAX_TOTAL_SIZE_MB * MB),
    artifactRefs: {
      enabled: e.STOWAGE_ARTIFACT_REFS,
      thresholdChars: e.STOWAGE_ARTIFACT_REFS_THRESHOLD_CHARS,
    },
    sessionTtlMs: Math.round(e.STOWAGE_SESSION_TTL_DAYS * 24 * 3600 * 1000),
    sweepIntervalMs: e.STOWAGE_SWEEP_INTERVAL_SECONDS * 1000,
    rateLimitPerMinute: e.STOWAGE_RATE_LIMIT_PER_MINUTE,
    bodyLimitBytes: Math.floor(e.STOWAGE_BODY_LIMIT_MB * MB),
    sessionBlobLimitBytes: Math.floor(e.STOWAGE_SESSION_BLOB_LIMIT_MB * MB),
  };
}

function redactUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = "***";
  return parsed.href;
}

/** What the app runs on, one line per part, printed at start. */
export function describeConfig(config: AppConfig): string[] {
  return [
    `data directory: ${config.dataDir}`,
    `objects and blobs: file system at ${join(config.dataDir, "objects")}`,
    config.databaseUrl
      ? `database: PostgreSQL at ${redactUrl(config.databaseUrl)}`
      : `database: embedded PGlite at ${join(config.dataDir, "pglite")}`,
    config.s3
      ? `artifact uploads: S3 presigned URLs (bucket ${config.s3.bucket} at ${config.s3.endpoint})`
      : `artifact uploads: signed URLs served by this app at ${config.publicUrl}/direct`,
    `artifact limits: ${config.artifactMaxFileBytes / MB} MB per file, ${config.artifactMaxTotalBytes / MB} MB per session`,
    `session blobs: kept ${config.sessionTtlMs / 86_400_000} days, swept every ${config.sweepIntervalMs / 1000} s`,
    `artifact refs in bootstrap context: ${config.artifactRefs.enabled ? `on (from ${config.artifactRefs.thresholdChars} chars)` : "off"}`,
    `listening on http://${config.host}:${config.port} (public URL ${config.publicUrl})`,
  ];
}
