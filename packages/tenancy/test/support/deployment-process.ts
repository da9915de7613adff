import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { createMemoryNotifier, type ObjectStore } from "@stowage/core";
import { createMemoryPromptMetricsLog } from "@stowage/hot-state";
import { createMemorySessionBlobRepository } from "@stowage/sessions";
import { createFsObjectStore } from "@stowage/storage-fs";
import { createMemoryQuotaLedger, createUploadService } from "@stowage/uploads";
import { createStowage, type StowageOptions } from "../../src/index.js";

/** What stands for a deployment's database: one per data directory, shared by its processes. */
const databases = new Map<
  string,
  {
    sessionBlobs: ReturnType<typeof createMemorySessionBlobRepository>;
    quota: ReturnType<typeof createMemoryQuotaLedger>;
    metrics: ReturnType<typeof createMemoryPromptMetricsLog>;
  }
>();

/**
 * One process of a deployment on `dir`: its shared store and upload store on disk, its session
 * blobs, quota ledger and prompt metrics in memory shared by every process of the same `dir` (as
 * a database would be). Two calls on one `dir` are two processes; `wrap` stands between a process
 * and the shared store (a crash, a failing write).
 */
export function processOn(
  dir: string,
  extra: Partial<StowageOptions<never>> = {},
  wrap: (store: ObjectStore) => ObjectStore = (store) => store,
) {
  mkdirSync(join(dir, "agent-sessions"), { recursive: true });
  let database = databases.get(dir);
  if (!database) {
    database = {
      sessionBlobs: createMemorySessionBlobRepository(),
      quota: createMemoryQuotaLedger(),
      metrics: createMemoryPromptMetricsLog(),
    };
    databases.set(dir, database);
  }
  const shared = wrap(createFsObjectStore({ root: join(dir, "shared") }));
  const uploadStore = createFsObjectStore({
    root: join(dir, "uploads"),
    directUrls: { baseUrl: "http://127.0.0.1:9/direct", secret: "s".repeat(32) },
  });
  const uploads = createUploadService({
    store: uploadStore,
    quota: database.quota,
    sessionExists: (principal, sessionId) => stowage.registeredSessions(principal).has(sessionId),
    // The service stops listing uploads by the retention the deployment's sweep deletes them by.
    ...(extra.uploadRetentionDays === undefined ? {} : { retentionDays: extra.uploadRetentionDays }),
  });
  const { metrics } = database;
  const stowage = createStowage({
    shared,
    notifier: createMemoryNotifier(),
    agentSessionsDir: join(dir, "agent-sessions"),
    sessionBlobs: database.sessionBlobs,
    promptMetricsFor: () => metrics,
    uploads,
    ...extra,
  });
  return { stowage, shared, uploadStore, uploads };
}

export type DeploymentProcess = ReturnType<typeof processOn>;
