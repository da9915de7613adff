import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { type Notifier, type ObjectStore, StowageError } from "@stowage/core";
import type { SessionBlobRepository } from "@stowage/sessions";
import { createFsObjectStore, type FsObjectStore } from "@stowage/storage-fs";
import {
  connectEmbedded,
  connectPostgres,
  createPostgresNotifier,
  createPostgresObjectStore,
  type StowageConnection,
} from "@stowage/storage-postgres";
import { createPostgresPromptMetricsLog } from "@stowage/storage-postgres/metrics";
import { createPostgresSessionBlobs } from "@stowage/storage-postgres/sessions";
import { createPostgresQuotaLedger } from "@stowage/storage-postgres/uploads";
import { createStowage, type Stowage, type Tenant } from "@stowage/tenancy";
import { createSharedStores } from "@stowage/tenancy/shared";
import { createUploadService, type UploadService } from "@stowage/uploads";
import type { AppConfig } from "./config.js";
import { createRateLimits, type RateLimits } from "./http/rate-limit.js";
import { cacheVerifiedKeys } from "./http/verified-keys.js";
import { countStreams } from "./observability/count-streams.js";
import { instrumentStore } from "./observability/instrument-store.js";
import { type AppMetrics, createAppMetrics } from "./observability/metrics.js";
import { AGENT_SESSIONS_DIR, s3StoreFor } from "./shared-store.js";

// Kept importable from here, where it always was.
export { AGENT_SESSIONS_DIR } from "./shared-store.js";

/** Everything the HTTP API, the CLI and the demo work with, built from one configuration. */
export interface Services {
  config: AppConfig;
  /** The file-system object store under the data directory (fs uploads and their signed URLs). */
  objects: FsObjectStore;
  /**
   * What every process of the app shares: S3 when configured, else PostgreSQL when configured,
   * else the file system (embedded mode is one process). Blobs, threads, blob marks and
   * content-ref records live here.
   */
  shared: ObjectStore;
  /**
   * The deployment: every principal's stores through one table (`@stowage/tenancy`), API keys,
   * blobs, a session's deletion from every store, the GC roots and the sweeps.
   */
  stowage: Stowage;
  /** `stowage.blobs`: every principal's blobs, deduplicated; a principal reads through its tenant's view only. */
  blobs: Stowage["blobs"];
  /** `stowage.apiKeys`, verified keys kept for `config.apiKeyCacheMs`. */
  apiKeys: Stowage["apiKeys"];
  uploads: UploadService;
  /**
   * Serves the signed URLs the upload service hands out when they point at this app (mounted at
   * `/direct`): the fs store's, or, with encryption, those of the sealed uploads' store on every
   * backend (S3 too: a presigned S3 URL would carry the bytes past the seal).
   */
  handleDirectRequest(request: Request): Promise<Response>;
  database: StowageConnection;
  sessionBlobs: SessionBlobRepository;
  notifier: Notifier;
  limits: RateLimits;
  /** What `GET /metrics` renders; every store above is measured and traced through it (`instrumentStore`). */
  metrics: AppMetrics;
  /** `stowage.tenant`: one principal's namespace, every store of the table in it. */
  tenant(principal: Tenant["principal"]): Tenant;
  close(): Promise<void>;
}

interface Stores {
  uploads: ObjectStore;
  shared: ObjectStore;
}

/** S3 when configured (the AWS SDK is loaded only then); else the fs store, shared through PostgreSQL if there is one. */
async function storesFor(
  config: AppConfig,
  objects: FsObjectStore,
  database: StowageConnection,
): Promise<Stores> {
  if (config.s3) {
    const s3 = await s3StoreFor(config.s3);
    return { uploads: s3, shared: s3 };
  }
  const shared = config.database
    ? createPostgresObjectStore({ db: database.db, namespace: "stowage" })
    : objects;
  return { uploads: objects, shared };
}

/**
 * The stores every request goes through, measured and traced per operation (`instrumentStore`):
 * the shared store and the uploads' store, labelled with their backend.
 */
function instrumentedStores(stores: Stores, config: AppConfig, metrics: AppMetrics): Stores {
  const shared = config.s3 ? "s3" : config.database ? "postgres" : "fs";
  return {
    shared: instrumentStore(stores.shared, { store: "shared", backend: shared, metrics }),
    uploads: instrumentStore(stores.uploads, { store: "uploads", backend: config.s3 ? "s3" : "fs", metrics }),
  };
}

export async function createServices(config: AppConfig): Promise<Services> {
  const { dataDir } = config;
  // The fs store's signed upload URLs ask the upload service (made below) before they store:
  // a URL revoked since it was handed out (its session's uploads deleted) writes nothing.
  let uploadsService: UploadService | undefined;
  // Made below; registrations are read through it (sealed when the deployment is encrypted).
  let deployment: Stowage | undefined;
  const objects = createFsObjectStore({
    root: join(dataDir, "objects"),
    directUrls: {
      baseUrl: `${config.publicUrl}/direct`,
      secret: config.signingSecret,
      checkUpload: async (upload, options) => {
        if (!uploadsService) throw new StowageError("UNAVAILABLE", "the upload service is not ready");
        await uploadsService.checkDirectUpload(upload, options);
      },
      // Its signed download URLs ask it too, before they serve: a file of a session deleted (or
      // in the trash) since the URL was signed is not found.
      checkDownload: async (download, options) => {
        if (!uploadsService) throw new StowageError("UNAVAILABLE", "the upload service is not ready");
        await uploadsService.checkDirectDownload(download, options);
      },
    },
  });
  const database = config.database
    ? await connectPostgres(config.database)
    : await connectEmbedded({ dataDir: join(dataDir, "pglite") });
  try {
    const metrics = createAppMetrics();
    const stores = instrumentedStores(await storesFor(config, objects, database), config, metrics);
    const databaseBackend = database.driver === "pg" ? "postgres" : "pglite";
    const notifier = createPostgresNotifier({ connection: database });
    // Encrypted, uploads are sealed as they pass through this app (the fs store's signed URLs,
    // whatever the backend); in clear, S3's own presigned URLs take them past it.
    const uploadStore: ObjectStore & { handleDirectRequest?: FsObjectStore["handleDirectRequest"] } =
      config.encryption
        ? objects.directUrlsFor(
            createSharedStores({ shared: stores.shared, encryption: config.encryption }).sealStore(
              stores.uploads,
            ),
          )
        : stores.uploads;
    const uploads = createUploadService({
      store: uploadStore,
      policy: config.uploadPolicy,
      quota: instrumentStore(createPostgresQuotaLedger({ db: database.db }), {
        store: "quota",
        backend: databaseBackend,
        metrics,
      }),
      // The caller is authenticated by the app's middleware (its API key), never by the service.
      // A session exists in its principal's namespace only: the same id of another principal is
      // another session, and nobody can squat an id.
      sessionExists: (principal, sessionId, options) => {
        if (!deployment) throw new StowageError("UNAVAILABLE", "the deployment is not ready");
        return deployment.registeredSessions(principal).has(sessionId, options);
      },
      // Listed uploads report when the sweep's retention deletes them.
      ...(config.uploadRetentionDays === undefined ? {} : { retentionDays: config.uploadRetentionDays }),
    });
    uploadsService = uploads;
    const sessionBlobs = instrumentStore(
      createPostgresSessionBlobs({ db: database.db, ttlMs: config.sessionTtlMs }),
      { store: "session_blobs", backend: databaseBackend, metrics },
    );
    const agentSessionsDir = join(dataDir, AGENT_SESSIONS_DIR);
    // Made now, so that a missing directory later means something is wrong (garbage collection
    // refuses to treat it as "no sessions").
    await mkdir(agentSessionsDir, { recursive: true });
    const stowage = createStowage({
      shared: stores.shared,
      ...(config.encryption ? { encryption: config.encryption } : {}),
      notifier,
      agentSessionsDir,
      sessionBlobs,
      uploads,
      hotState: config.hotState,
      redactSecrets: config.redactSecrets,
      ...(config.maxExpiryDays === undefined ? {} : { maxExpiryDays: config.maxExpiryDays }),
      ...(config.trashDays === undefined ? {} : { trashDays: config.trashDays }),
      ...(config.uploadRetentionDays === undefined
        ? {}
        : { uploadRetentionDays: config.uploadRetentionDays }),
      // Blobs are shared by every host where S3 or PostgreSQL holds them; agent sessions are not.
      sharedAcrossHosts: config.s3 !== undefined || config.database !== undefined,
      // Prompt metrics go to the database's table, PostgreSQL or the embedded PGlite (a dashboard can query it).
      promptMetricsFor: (owner: string) =>
        createPostgresPromptMetricsLog({ db: database.db, namespace: owner }),
    });
    deployment = stowage;
    const limits = countStreams(
      createRateLimits({ perMinute: config.rateLimitPerMinute, db: database.db }),
      metrics,
    );
    return {
      config,
      objects,
      // Sealed when the deployment is encrypted: nothing of the app reads the raw store.
      shared: stowage.shared,
      stowage,
      blobs: stowage.blobs,
      // Every request verifies its key: a verified one is kept a few seconds (`verified-keys.ts`).
      apiKeys: cacheVerifiedKeys(stowage.apiKeys, config.apiKeyCacheMs),
      uploads,
      handleDirectRequest: (request) =>
        (uploadStore.handleDirectRequest ?? objects.handleDirectRequest)(request),
      database,
      // Sealed like the shared store when the deployment is encrypted.
      sessionBlobs: stowage.deployment.sessionBlobs ?? sessionBlobs,
      notifier,
      limits,
      metrics,
      tenant: stowage.tenant,
      async close() {
        limits.close();
        await notifier.close();
        await database.close();
      },
    };
  } catch (err) {
    await database.close().catch(() => {});
    throw err;
  }
}
