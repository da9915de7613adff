import { join } from "node:path";
import { type BlobStore, createBlobStore } from "@stowage/blob-store";
import type { ObjectStore } from "@stowage/core";
import { type ArtifactRegistry, createArtifactRegistry } from "@stowage/hot-state";
import type { SessionBlobRepository } from "@stowage/sessions";
import { createFsObjectStore, type FsObjectStore } from "@stowage/storage-fs";
import {
  connectEmbedded,
  connectPostgres,
  createPostgresSessionBlobs,
  type StowageConnection,
} from "@stowage/storage-postgres";
import {
  type ApiKeys,
  type ArtifactUploads,
  createApiKeys,
  createArtifactPolicy,
  createArtifactUploads,
  createS3Client,
  createS3ObjectStore,
} from "@stowage/storage-s3";
import { createApiKeyRecords } from "./auth/api-key-records.js";
import { createSessionOwners, type SessionOwners } from "./auth/session-owners.js";
import type { AppConfig } from "./config.js";
import { type AgentSessions, createAgentSessions } from "./sessions/agent-sessions.js";
import { createThreadFeeds, type ThreadFeeds } from "./threads/thread-feed.js";

/** Everything the HTTP API, the CLI and the demo work with, built from one configuration. */
export interface Services {
  config: AppConfig;
  /** The file-system object store under the data directory (blobs, keys, owners, fs uploads). */
  objects: FsObjectStore;
  blobs: BlobStore;
  /** Content-addressed artifacts that bootstrap context refers to (`artifacts_get`). */
  registry: ArtifactRegistry;
  /** Where uploaded session artifacts live: the fs store, or S3 when configured. */
  uploadStore: ObjectStore;
  uploads: ArtifactUploads;
  apiKeys: ApiKeys;
  owners: SessionOwners;
  database: StowageConnection;
  sessionBlobs: SessionBlobRepository;
  threads: ThreadFeeds;
  agentSessions: AgentSessions;
  close(): Promise<void>;
}

function s3UploadStore(config: NonNullable<AppConfig["s3"]>): ObjectStore {
  const { endpoint, region, accessKeyId, secretAccessKey, bucket } = config;
  return createS3ObjectStore({
    client: createS3Client({ endpoint, region, accessKeyId, secretAccessKey }),
    bucket,
  });
}

export async function createServices(config: AppConfig): Promise<Services> {
  const objects = createFsObjectStore({
    root: join(config.dataDir, "objects"),
    directUrls: { baseUrl: `${config.publicUrl}/direct`, secret: config.signingSecret },
  });
  const blobs = createBlobStore({ store: objects, layout: "sharded", prefix: "blobs/" });
  const keyStore = createFsObjectStore({ root: join(config.dataDir, "keys") });
  const apiKeys = createApiKeys({ records: createApiKeyRecords(keyStore) });
  const owners = createSessionOwners(createFsObjectStore({ root: join(config.dataDir, "owners") }));
  const uploadStore = config.s3 ? s3UploadStore(config.s3) : objects;
  const uploads = createArtifactUploads({
    store: uploadStore,
    policy: createArtifactPolicy({
      maxFileSizeBytes: config.artifactMaxFileBytes,
      maxTotalSizeBytes: config.artifactMaxTotalBytes,
    }),
    auth: {
      authenticate: (apiKey, options) => apiKeys.authenticate(apiKey, options),
      sessionOwner: (sessionId, options) => owners.ownerOf(sessionId, options),
    },
  });
  const database = config.databaseUrl
    ? await connectPostgres({ url: config.databaseUrl })
    : await connectEmbedded({ dataDir: join(config.dataDir, "pglite") });
  const sessionBlobs = createPostgresSessionBlobs(database.db, { ttlMs: config.sessionTtlMs });

  return {
    config,
    objects,
    blobs,
    registry: createArtifactRegistry({
      store: createFsObjectStore({ root: join(config.dataDir, "registry") }),
    }),
    uploadStore,
    uploads,
    apiKeys,
    owners,
    database,
    sessionBlobs,
    threads: createThreadFeeds(config.dataDir),
    agentSessions: createAgentSessions(join(config.dataDir, "agent-sessions")),
    close: () => database.close(),
  };
}
