import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import {
  type Env,
  envFlag,
  envPositiveInteger,
  envPositiveNumber,
  envString,
  envUrl,
  errnoOf,
  StowageError,
} from "@stowage/core";
import { writeFileAtomic } from "@stowage/core/fs";
import {
  bootstrapOptionsFromEnv,
  type HotStateStoreEnvOptions,
  hotStateStoreOptionsFromEnv,
} from "@stowage/hot-state/env";
import { type ConnectPostgresOptions, postgresOptionsFromEnv } from "@stowage/storage-postgres/env";
import { type S3EnvOptions, s3OptionsFromEnv } from "@stowage/storage-s3/env";
import type { EncryptionOptions } from "@stowage/tenancy";
import { createUploadPolicy, type UploadPolicy, uploadPolicyOptionsFromEnv } from "@stowage/uploads";

/** Shortest signing secret accepted from `STOWAGE_SIGNING_SECRET`. */
export const MIN_SIGNING_SECRET_LENGTH = 32;
const MIB = 1024 * 1024;

export interface AppConfig {
  dataDir: string;
  host: string;
  port: number;
  /** Base URL clients reach this app at; signed URLs are made for it. */
  publicUrl: string;
  signingSecret: string;
  /** PostgreSQL from `DATABASE_URL`; undefined means embedded PGlite in the data directory. */
  database: ConnectPostgresOptions | undefined;
  /** S3 from the `S3_*` variables; undefined means uploads on the file system, signed by this app. */
  s3: S3EnvOptions | undefined;
  /** See {@link StorageConfig.encryption}. */
  encryption: EncryptionOptions | undefined;
  uploadPolicy: UploadPolicy;
  bootstrap: { enabled: boolean; thresholdChars: number };
  /** `STOWAGE_HOT_STATE_KEEP_VERSIONS`: hot-state versions kept per session; unset keeps them all. */
  hotState: HotStateStoreEnvOptions;
  sessionTtlMs: number;
  /** `STOWAGE_UPLOAD_RETENTION_DAYS`: uploads older than this are deleted by the sweeper; unset keeps them. */
  uploadRetentionDays: number | undefined;
  /**
   * `STOWAGE_MAX_EXPIRY_DAYS`: how far ahead an owner may set an expiry (`PATCH /expiring/…`);
   * unset: `@stowage/tenancy`'s default, 30.
   */
  maxExpiryDays: number | undefined;
  /**
   * `STOWAGE_TRASH_DAYS`: days a deleted session stays in its owner's trash before the sweeper
   * purges it; `0` deletes at once; unset: `@stowage/tenancy`'s default, 7.
   */
  trashDays: number | undefined;
  sweepIntervalMs: number;
  rateLimitPerMinute: number;
  /**
   * `STOWAGE_TRUST_PROXY`: how many reverse proxies are in front of the app (default 0): the
   * address a request's rate limit counts is then the one the outermost proxy saw, from
   * `X-Forwarded-For` (see `clientAddress`).
   */
  trustedProxies: number;
  bodyLimitBytes: number;
  sessionBlobLimitBytes: number;
  /**
   * `STOWAGE_SESSION_BLOB_CHUNKS` (default on): keep a session a container sends as chunks in the
   * caller's blobs (a follow-up stores only what is new); off, the row holds the blob as sent, as
   * document 002's `agent_sessions` does, for a host that reads that column itself.
   */
  sessionBlobChunks: boolean;
  /**
   * `STOWAGE_REDACT_SECRETS` (default on): secrets of known shapes in thread posts are replaced by
   * `[REDACTED:<kind>]` before they are stored, since a thread is shared; off for threads never shared.
   */
  redactSecrets: boolean;
  /**
   * `STOWAGE_MCP_MAX_SESSIONS`, `STOWAGE_MCP_MAX_SESSIONS_PER_PRINCIPAL`,
   * `STOWAGE_MCP_SESSION_IDLE_MINUTES`: the caps of `/mcp/sessions/:id`'s session table
   * (`createMcpHttpSessions` of `@stowage/mcp`); unset, the package's defaults (256, 16, 30 minutes).
   */
  mcpSessions: McpSessionsConfig;
  /**
   * `STOWAGE_METRICS_TOKEN`: the bearer token `GET /metrics` asks for (at least
   * {@link MIN_METRICS_TOKEN_LENGTH} characters); unset, there is no metrics route.
   */
  metricsToken: string | undefined;
  /**
   * `STOWAGE_SHUTDOWN_GRACE_SECONDS` (default 10): how long a stopping server waits for the requests
   * it is answering (an upload being completed) before it closes their connections.
   */
  shutdownGraceMs: number;
  /**
   * `STOWAGE_API_KEY_CACHE_SECONDS` (default {@link DEFAULT_API_KEY_CACHE_SECONDS}, at most
   * {@link MAX_API_KEY_CACHE_SECONDS}; 0 keeps none): how long a process keeps an API key that
   * verified before it reads the key's record again. A key revoked by another process (`stowage
   * keys revoke`, another replica) stops working here within this time.
   */
  apiKeyCacheMs: number;
}

/** Shortest metrics token accepted from `STOWAGE_METRICS_TOKEN`. */
export const MIN_METRICS_TOKEN_LENGTH = 32;

function metricsTokenFrom(env: Env): string | undefined {
  const token = envString(env, "STOWAGE_METRICS_TOKEN");
  if (token !== undefined && token.length < MIN_METRICS_TOKEN_LENGTH) {
    throw invalidSetting(
      "STOWAGE_METRICS_TOKEN",
      `STOWAGE_METRICS_TOKEN must be at least ${MIN_METRICS_TOKEN_LENGTH} characters`,
    );
  }
  return token;
}

/** How long a verified API key is kept by default: one GET of its record per key per 5 s, not per request. */
const DEFAULT_API_KEY_CACHE_SECONDS = 5;
/** The longest a revoked key may keep working in another process. */
const MAX_API_KEY_CACHE_SECONDS = 300;

function apiKeyCacheSecondsFrom(env: Env): number {
  const value = envString(env, "STOWAGE_API_KEY_CACHE_SECONDS");
  if (value === undefined) return DEFAULT_API_KEY_CACHE_SECONDS;
  const seconds = /^\d+(\.\d+)?$/.test(value) ? Number(value) : Number.NaN;
  if (!(seconds >= 0 && seconds <= MAX_API_KEY_CACHE_SECONDS)) {
    throw invalidSetting(
      "STOWAGE_API_KEY_CACHE_SECONDS",
      `STOWAGE_API_KEY_CACHE_SECONDS must be a number of seconds from 0 to ${MAX_API_KEY_CACHE_SECONDS}, got "${value}"`,
    );
  }
  return seconds;
}

/** The caps of the MCP session table; what is unset takes `@stowage/mcp`'s default. */
export interface McpSessionsConfig {
  maxSessions?: number;
  maxSessionsPerOwner?: number;
  idleMs?: number;
}

function invalidSetting(setting: string, message: string): StowageError {
  return new StowageError("INVALID_INPUT", message, { reason: "INVALID_SETTING", details: { setting } });
}

function portFrom(env: Env): number {
  const port = envString(env, "STOWAGE_PORT");
  if (port === undefined) return 8787;
  if (!/^\d{1,5}$/.test(port) || Number(port) > 65_535) {
    throw invalidSetting("STOWAGE_PORT", `STOWAGE_PORT must be a port number from 0 to 65535, got "${port}"`);
  }
  return Number(port);
}

function signingSecretFrom(env: Env): string | undefined {
  const secret = envString(env, "STOWAGE_SIGNING_SECRET");
  if (secret !== undefined && secret.length < MIN_SIGNING_SECRET_LENGTH) {
    throw invalidSetting(
      "STOWAGE_SIGNING_SECRET",
      `STOWAGE_SIGNING_SECRET must be at least ${MIN_SIGNING_SECRET_LENGTH} characters`,
    );
  }
  return secret;
}

/** Most proxies `STOWAGE_TRUST_PROXY` may name: a longer chain is a mistake, not a deployment. */
const MAX_TRUSTED_PROXIES = 10;

function trustedProxiesFrom(env: Env): number {
  const value = envString(env, "STOWAGE_TRUST_PROXY");
  if (value === undefined) return 0;
  if (!/^\d{1,2}$/.test(value) || Number(value) > MAX_TRUSTED_PROXIES) {
    throw invalidSetting(
      "STOWAGE_TRUST_PROXY",
      `STOWAGE_TRUST_PROXY must be the number of reverse proxies in front of the app, 0 to ${MAX_TRUSTED_PROXIES}, got "${value}"`,
    );
  }
  return Number(value);
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
    if (stored.length >= MIN_SIGNING_SECRET_LENGTH) return stored;
  } catch (err) {
    if (errnoOf(err) !== "ENOENT") throw err;
  }
  const secret = randomBytes(32).toString("base64url");
  await writeFileAtomic(path, `${secret}\n`);
  return secret;
}

/**
 * A reader of settings that collects every problem instead of stopping at the first, and the one
 * error that lists them all.
 */
function settingsReader() {
  const problems: StowageError[] = [];
  return {
    problems,
    read<T>(reader: () => T): T | undefined {
      try {
        return reader();
      } catch (err) {
        if (!StowageError.is(err, "INVALID_INPUT")) throw err;
        problems.push(err);
        return undefined;
      }
    },
    failure(): StowageError {
      return new StowageError(
        "INVALID_INPUT",
        `invalid configuration:\n${problems.map((problem) => `  ${problem.message}`).join("\n")}`,
        {
          reason: "INVALID_SETTING",
          details: { settings: problems.map((problem) => problem.details?.setting ?? null) },
        },
      );
    },
  };
}

/** `STOWAGE_DATA_DIR` (default `.stowage`), resolved against the user's directory. */
export function dataDirFrom(env: Env, cwd: string): string {
  return resolve(cwd, envString(env, "STOWAGE_DATA_DIR") ?? ".stowage");
}

/** Where the stores are, and nothing else: what a command that only reads or writes data needs. */
export interface StorageConfig {
  dataDir: string;
  /** PostgreSQL from `DATABASE_URL`; undefined means embedded PGlite in the data directory. */
  database: ConnectPostgresOptions | undefined;
  /** S3 from the `S3_*` variables; undefined means the file system of the data directory. */
  s3: S3EnvOptions | undefined;
  /**
   * `STOWAGE_ENCRYPTION_KEY`: base64 32-byte key-encryption keys, comma-separated, each optionally
   * `id:key`, the first current. Set, everything in the shared store and every stored session is
   * sealed (`createStowage`'s `encryption`); unset, stored in clear. Checked when the stores open.
   */
  encryption: EncryptionOptions | undefined;
}

/** The encryption of `STOWAGE_ENCRYPTION_KEY`, holding that one setting only (not the whole environment). */
function encryptionFrom(env: Env): EncryptionOptions | undefined {
  const keys = envString(env, "STOWAGE_ENCRYPTION_KEY");
  return keys === undefined ? undefined : { env: { STOWAGE_ENCRYPTION_KEY: keys } };
}

/**
 * Reads only the storage settings (data directory, PostgreSQL, S3): a command that works on stored
 * data is not stopped by a bad server setting (`STOWAGE_PORT`), and creates no signing secret.
 */
export function loadStorageConfig(env: Env = process.env, cwd = process.cwd()): StorageConfig {
  const settings = settingsReader();
  const database = settings.read(() => postgresOptionsFromEnv(env));
  const s3 = settings.read(() => s3OptionsFromEnv(env));
  if (settings.problems.length > 0) throw settings.failure();
  return { dataDir: dataDirFrom(env, cwd), database, s3, encryption: encryptionFrom(env) };
}

/** The MCP session table's settings, each left out when unset (the package's default holds). */
function mcpSessionsOf(
  maxSessions: number | undefined,
  maxSessionsPerOwner: number | undefined,
  idleMinutes: number | undefined,
): McpSessionsConfig {
  return {
    ...(maxSessions === undefined ? {} : { maxSessions }),
    ...(maxSessionsPerOwner === undefined ? {} : { maxSessionsPerOwner }),
    ...(idleMinutes === undefined ? {} : { idleMs: idleMinutes * 60_000 }),
  };
}

/** `STOWAGE_SESSION_TTL_DAYS` (default 7) in ms: how long stored session blobs are kept. */
function sessionTtlMsFrom(env: Env): number {
  return Math.round((envPositiveNumber(env, "STOWAGE_SESSION_TTL_DAYS") ?? 7) * 24 * 3600 * 1000);
}

/** What the session-blob repository needs: the storage settings and the session TTL. */
export interface SessionBlobsConfig extends StorageConfig {
  sessionTtlMs: number;
}

/** Reads only the settings of stored session blobs (`stowage session capture|restore`). */
export function loadSessionBlobsConfig(env: Env = process.env, cwd = process.cwd()): SessionBlobsConfig {
  const settings = settingsReader();
  const sessionTtlMs = settings.read(() => sessionTtlMsFrom(env));
  const database = settings.read(() => postgresOptionsFromEnv(env));
  const encryption = encryptionFrom(env);
  // S3 only where the data keys are (an encrypted deployment's shared store); the sessions are in the database.
  const s3 = encryption ? settings.read(() => s3OptionsFromEnv(env)) : undefined;
  if (settings.problems.length > 0 || sessionTtlMs === undefined) throw settings.failure();
  return { dataDir: dataDirFrom(env, cwd), database, s3, sessionTtlMs, encryption };
}

/**
 * Reads every setting, the packages' through their own `…OptionsFromEnv`, and fails once with the
 * full list of problems. Empty variables count as unset.
 */
export async function loadConfig(env: Env = process.env, cwd = process.cwd()): Promise<AppConfig> {
  const { problems, read, failure } = settingsReader();
  const host = envString(env, "STOWAGE_HOST") ?? "127.0.0.1";
  const port = read(() => portFrom(env));
  const publicUrl = read(() => envUrl(env, "STOWAGE_PUBLIC_URL"));
  const signingSecret = read(() => signingSecretFrom(env));
  const sessionTtlMs = read(() => sessionTtlMsFrom(env));
  const uploadRetentionDays = read(() => envPositiveNumber(env, "STOWAGE_UPLOAD_RETENTION_DAYS"));
  const maxExpiryDays = read(() => envPositiveNumber(env, "STOWAGE_MAX_EXPIRY_DAYS"));
  // 0 is a choice here (delete at once), which envPositiveNumber refuses.
  const trashDays = read(() =>
    envString(env, "STOWAGE_TRASH_DAYS") === "0" ? 0 : envPositiveNumber(env, "STOWAGE_TRASH_DAYS"),
  );
  const sweepSeconds = read(() => envPositiveInteger(env, "STOWAGE_SWEEP_INTERVAL_SECONDS") ?? 600);
  const rateLimitPerMinute = read(() => envPositiveInteger(env, "STOWAGE_RATE_LIMIT_PER_MINUTE") ?? 600);
  const trustedProxies = read(() => trustedProxiesFrom(env));
  const bodyLimitMiB = read(() => envPositiveNumber(env, "STOWAGE_BODY_LIMIT_MB") ?? 16);
  const sessionBlobLimitMiB = read(() => envPositiveNumber(env, "STOWAGE_SESSION_BLOB_LIMIT_MB") ?? 256);
  const sessionBlobChunks = read(() => envFlag(env, "STOWAGE_SESSION_BLOB_CHUNKS") ?? true);
  const redactSecrets = read(() => envFlag(env, "STOWAGE_REDACT_SECRETS") ?? true);
  const mcpMaxSessions = read(() => envPositiveInteger(env, "STOWAGE_MCP_MAX_SESSIONS"));
  const mcpMaxPerPrincipal = read(() => envPositiveInteger(env, "STOWAGE_MCP_MAX_SESSIONS_PER_PRINCIPAL"));
  const mcpIdleMinutes = read(() => envPositiveInteger(env, "STOWAGE_MCP_SESSION_IDLE_MINUTES"));
  const metricsToken = read(() => metricsTokenFrom(env));
  const shutdownGraceSeconds = read(() => envPositiveNumber(env, "STOWAGE_SHUTDOWN_GRACE_SECONDS") ?? 10);
  const apiKeyCacheSeconds = read(() => apiKeyCacheSecondsFrom(env));
  const database = read(() => postgresOptionsFromEnv(env));
  const uploadPolicy = read(() => createUploadPolicy(uploadPolicyOptionsFromEnv(env)));
  const bootstrap = read(() => bootstrapOptionsFromEnv(env));
  const hotState = read(() => hotStateStoreOptionsFromEnv(env));
  // The env entry of storage-s3 does not load the AWS SDK; only a configured S3 store does.
  const s3 = read(() => s3OptionsFromEnv(env));
  if (
    problems.length > 0 ||
    port === undefined ||
    sessionTtlMs === undefined ||
    sweepSeconds === undefined ||
    rateLimitPerMinute === undefined ||
    trustedProxies === undefined ||
    bodyLimitMiB === undefined ||
    sessionBlobLimitMiB === undefined ||
    sessionBlobChunks === undefined ||
    redactSecrets === undefined ||
    shutdownGraceSeconds === undefined ||
    apiKeyCacheSeconds === undefined ||
    uploadPolicy === undefined ||
    bootstrap === undefined ||
    hotState === undefined
  ) {
    throw failure();
  }
  const dataDir = dataDirFrom(env, cwd);
  return {
    dataDir,
    host,
    port,
    publicUrl: (publicUrl ?? `http://${host}:${port}`).replace(/\/+$/, ""),
    signingSecret: await signingSecretFor(dataDir, signingSecret),
    database,
    s3,
    encryption: encryptionFrom(env),
    uploadPolicy,
    bootstrap,
    hotState,
    sessionTtlMs,
    uploadRetentionDays,
    maxExpiryDays,
    trashDays,
    sweepIntervalMs: sweepSeconds * 1000,
    rateLimitPerMinute,
    trustedProxies,
    bodyLimitBytes: Math.floor(bodyLimitMiB * MIB),
    sessionBlobLimitBytes: Math.floor(sessionBlobLimitMiB * MIB),
    sessionBlobChunks,
    redactSecrets,
    mcpSessions: mcpSessionsOf(mcpMaxSessions, mcpMaxPerPrincipal, mcpIdleMinutes),
    metricsToken,
    shutdownGraceMs: Math.round(shutdownGraceSeconds * 1000),
    apiKeyCacheMs: Math.round(apiKeyCacheSeconds * 1000),
  };
}

function redactUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = "***";
  return parsed.href;
}

/**
 * What is wrong with running more than one process of this configuration, said at start-up. With
 * `DATABASE_URL` but no S3, uploads stay on each host's disk while the quota ledger is shared: a
 * second process on the same database keeps its own uploads, and each listing reconciles the
 * session's quota with the files of its own host only, dropping the other's (a quota bypass).
 */
export function replicaWarnings(config: Pick<AppConfig, "database" | "s3" | "dataDir">): string[] {
  if (!config.database || config.s3) return [];
  return [
    `uploads are kept on this host's disk (${join(config.dataDir, "objects")}) while the quota ledger is in PostgreSQL: run ONE process on this database, or configure S3 (S3_BUCKET, …) for replicas; a second process would keep its own uploads and undo the other's quota`,
  ];
}

/** What the app runs on, one line per part, printed at start. */
export function describeConfig(config: AppConfig): string[] {
  const { s3, uploadPolicy: policy } = config;
  return [
    `data directory: ${config.dataDir}`,
    `objects and blobs: file system at ${join(config.dataDir, "objects")}`,
    config.database
      ? `database: PostgreSQL at ${config.database.url === undefined ? "(no URL)" : redactUrl(config.database.url)}`
      : `database: embedded PGlite at ${join(config.dataDir, "pglite")}`,
    s3
      ? `uploads: S3 presigned URLs (bucket ${s3.bucket}${s3.client.endpoint ? ` at ${s3.client.endpoint}` : ""})`
      : `uploads: signed URLs served by this app at ${config.publicUrl}/direct`,
    `upload limits: ${policy.maxFileSizeBytes / MIB} MiB per file, ${policy.maxTotalSizeBytes / MIB} MiB per session`,
    `session blobs: kept ${config.sessionTtlMs / 86_400_000} days, swept every ${config.sweepIntervalMs / 1000} s`,
    `uploads: ${config.uploadRetentionDays === undefined ? "kept until deleted" : `deleted after ${config.uploadRetentionDays} days`}`,
    `deleted sessions: ${config.trashDays === 0 ? "deleted at once" : `kept in the trash ${config.trashDays ?? "the default 7"} days`}`,
    `expiries: extended by their owner up to ${config.maxExpiryDays === undefined ? "the default 30" : config.maxExpiryDays} days ahead`,
    `content refs in bootstrap context: ${config.bootstrap.enabled ? `on (from ${config.bootstrap.thresholdChars} chars)` : "off"}`,
    config.encryption
      ? "encryption at rest: on (STOWAGE_ENCRYPTION_KEY): the shared store and stored sessions are sealed; uploads are not (they travel by signed URL)"
      : "encryption at rest: off (set STOWAGE_ENCRYPTION_KEY to seal the shared store and stored sessions)",
    `thread posts: ${config.redactSecrets ? "secrets redacted" : "stored as posted (STOWAGE_REDACT_SECRETS=off)"}`,
    `hot state: ${config.hotState.keepVersions === undefined ? "every version kept" : `the newest ${config.hotState.keepVersions} versions kept per session`}`,
    `listening on http://${config.host}:${config.port} (public URL ${config.publicUrl})`,
    ...(config.trustedProxies > 0
      ? [`rate limits: client addresses from X-Forwarded-For behind ${config.trustedProxies} proxies`]
      : []),
    ...replicaWarnings(config).map((warning) => `WARNING: ${warning}`),
  ];
}
