import { type Env, envPositiveInteger, envUrl, StowageError } from "@stowage/core";
import type { ConnectPostgresOptions } from "./connect-postgres.js";

const URL_PROTOCOLS = ["postgres:", "postgresql:"];

/** `DATABASE_URL`, checked without ever echoing it: a connection string may hold a password. */
function databaseUrl(env: Env): string | undefined {
  try {
    return envUrl(env, "DATABASE_URL", URL_PROTOCOLS);
  } catch (err) {
    if (!StowageError.is(err)) throw err;
    throw new StowageError(
      err.code,
      "DATABASE_URL must be a postgres:// or postgresql:// connection string (its value is not shown: it may hold a password)",
      { ...(err.reason === undefined ? {} : { reason: err.reason }), details: { setting: "DATABASE_URL" } },
    );
  }
}

/**
 * The `connectPostgres` options from the environment: `DATABASE_URL` (a `postgres://` or
 * `postgresql://` connection string) and `DATABASE_POOL_MAX` (pool size, default 10).
 * Undefined when `DATABASE_URL` is unset or empty, which means "no server: use
 * `connectEmbedded`". A malformed value fails with INVALID_INPUT (`INVALID_SETTING`).
 */
export function postgresOptionsFromEnv(env: Env): ConnectPostgresOptions | undefined {
  const url = databaseUrl(env);
  const maxConnections = envPositiveInteger(env, "DATABASE_POOL_MAX");
  if (url === undefined) return undefined;
  return { url, ...(maxConnections === undefined ? {} : { maxConnections }) };
}
