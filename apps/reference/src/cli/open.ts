import { StowageError } from "@stowage/core";
import type { SessionBlobRepository } from "@stowage/sessions";
import type { ownerOf as OwnerOf } from "@stowage/tenancy/shared";
import type { StorageConfig } from "../config.js";
import type { Services } from "../services.js";
import type { CommandContext } from "./context.js";
import type { SessionBlobStores } from "./session-blob-stores.js";
import type { SessionStores, StoredData } from "./shared-stores.js";

/** Opens what `open` opens on the storage settings, runs `work` on it, and closes it. */
async function withStorage<S extends { close(): Promise<void> }, T>(
  context: CommandContext,
  open: (config: StorageConfig) => Promise<S>,
  work: (stores: S) => Promise<T>,
): Promise<T> {
  // Loaded here, not at the top: `stowage --help` loads none of the storage packages.
  const { loadStorageConfig } = await import("../config.js");
  const stores = await open(loadStorageConfig(context.env, context.cwd));
  try {
    return await work(stores);
  } finally {
    await stores.close();
  }
}

/**
 * Runs `work` on the shared store alone (blobs, API keys, registered sessions): settings read are
 * the storage ones only, no embedded database is opened and no signing secret is made, and only
 * the storage packages are loaded.
 */
export async function withStoredData<T>(
  context: CommandContext,
  work: (stores: StoredData) => Promise<T>,
): Promise<T> {
  const { openStoredData } = await import("./shared-stores.js");
  return withStorage(context, openStoredData, work);
}

/**
 * {@link withStoredData} with every principal's whole tenant (sessions, threads, content refs, hot
 * state), for a command that serves a session.
 */
export async function withSessionStores<T>(
  context: CommandContext,
  work: (stores: SessionStores) => Promise<T>,
): Promise<T> {
  const { openSessionStores } = await import("./shared-stores.js");
  return withStorage(context, openSessionStores, work);
}

/** The embedded database allows one process at a time: beside a running server, say so and how to go on. */
function explainLocked(err: unknown): unknown {
  if (!StowageError.is(err, "UNAVAILABLE") || err.reason !== "DATA_DIR_LOCKED") return err;
  const holder = err.details as { pid?: number; hostname?: string } | undefined;
  return new StowageError(
    "UNAVAILABLE",
    `the data directory's embedded database is in use by another process (pid ${holder?.pid ?? "?"} on ${holder?.hostname ?? "?"}), ` +
      "most likely `stowage serve`: stop it first, or do this through its HTTP API",
    { cause: err, reason: "DATA_DIR_LOCKED", ...(err.details ? { details: err.details } : {}) },
  );
}

/** The stored session blobs, where they are ({@link sessionBlobsPlace}), and how the server names a principal's. */
export type SessionBlobAccess<R> = { sessionBlobs: R; where: string; ownerOf: typeof OwnerOf };

/**
 * Runs `work` on the stored session blobs: the database alone (PostgreSQL, else the embedded
 * PGlite, created in the data directory when it is not there yet), with the session-blob settings
 * only; `ownerOf` names a principal's blobs as the server does.
 */
export async function withSessionBlobs<T>(
  context: CommandContext,
  work: (stores: SessionBlobAccess<SessionBlobRepository>) => Promise<T>,
): Promise<T> {
  return openSessionBlobsFor(context, false, (stores) =>
    work(stores as SessionBlobAccess<SessionBlobRepository>),
  );
}

/**
 * {@link withSessionBlobs} for a command that only reads: where no database is (a data directory
 * nothing was captured into), `sessionBlobs` is null and nothing is created.
 */
export async function readSessionBlobs<T>(
  context: CommandContext,
  work: (stores: SessionBlobAccess<SessionBlobRepository | null>) => Promise<T>,
): Promise<T> {
  return openSessionBlobsFor(context, true, work);
}

async function openSessionBlobsFor<T>(
  context: CommandContext,
  readOnly: boolean,
  work: (stores: SessionBlobAccess<SessionBlobRepository | null>) => Promise<T>,
): Promise<T> {
  const { loadSessionBlobsConfig } = await import("../config.js");
  const { openSessionBlobs, sessionBlobsExist, sessionBlobsPlace } = await import("./session-blob-stores.js");
  const { ownerOf } = await import("@stowage/tenancy/shared");
  const config = loadSessionBlobsConfig(context.env, context.cwd);
  const where = sessionBlobsPlace(config);
  if (readOnly && !(await sessionBlobsExist(config))) return work({ sessionBlobs: null, where, ownerOf });
  let stores: SessionBlobStores;
  try {
    stores = await openSessionBlobs(config);
  } catch (err) {
    throw explainLocked(err);
  }
  try {
    return await work({ sessionBlobs: stores.sessionBlobs, where, ownerOf });
  } finally {
    await stores.close();
  }
}

/**
 * Runs `work` with all of the app's services on the configured data directory (what the server
 * opens: every setting, the database, the uploads), closing them after.
 */
export async function withServices<T>(
  context: CommandContext,
  work: (services: Services) => Promise<T>,
): Promise<T> {
  const { loadConfig } = await import("../config.js");
  const { createServices } = await import("../services.js");
  const config = await loadConfig(context.env, context.cwd);
  let services: Services;
  try {
    services = await createServices(config);
  } catch (err) {
    throw explainLocked(err);
  }
  try {
    return await work(services);
  } finally {
    await services.close();
  }
}
