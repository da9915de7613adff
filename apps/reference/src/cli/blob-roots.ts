import { join } from "node:path";
import {
  type BlobRootSource,
  scanBytesForBlobRefs,
  scanFilesForBlobRefs,
  scanObjectStoreForBlobRefs,
} from "@stowage/blob-store";
import { StowageError } from "@stowage/core";
import { iterateContentRefIds, iterateHotStateContentIds } from "@stowage/hot-state";
import { decompressBounded, iterateSessionBlobs, type SessionBlobRepository } from "@stowage/sessions";
import { AGENT_SESSIONS_DIR, type Services } from "../services.js";
import { CONTENT_REFS_PREFIX, HOT_STATE_PREFIX, THREADS_PREFIX } from "../tenancy/tenants.js";

/** What the collection may take as the deployment's agent sessions; see {@link blobRoots}. */
export interface BlobRootsOptions {
  /**
   * The operator's word that this data directory holds every agent session of the deployment:
   * one app process (or several on this one data directory). Needed when the blobs are shared
   * (S3 or PostgreSQL configured) and no other host's directory is given.
   */
  singleHost?: boolean;
  /**
   * The agent-sessions directories of the deployment's other hosts, as mounted here: scanned
   * beside this data directory's.
   */
  otherAgentSessionsDirs?: readonly string[];
}

/**
 * Refuses (UNAVAILABLE, reason `ROOTS_NOT_SHARED`) a collection whose roots would miss agent
 * sessions: blobs live in the shared store every host sees (S3, PostgreSQL), but agent session
 * files stay on the disk of the host that wrote them, so a collection run from one host would
 * delete blobs referenced only by another host's sessions.
 */
function assertSessionsCovered(config: Services["config"], options: BlobRootsOptions): void {
  const shared = config.s3 !== undefined || config.database !== undefined;
  if (!shared || options.singleHost || (options.otherAgentSessionsDirs?.length ?? 0) > 0) return;
  throw new StowageError(
    "UNAVAILABLE",
    "blobs are shared by every host (S3 or PostgreSQL is configured) but agent sessions stay on the disk of the host that wrote them: " +
      "collecting from here could delete blobs only another host's sessions reference. Run it with --single-host if this data " +
      "directory holds every agent session of the deployment, or give each other host's agent-sessions directory with --agent-sessions-dir",
    { reason: "ROOTS_NOT_SHARED" },
  );
}

/**
 * Every place the app writes `blob:sha256:` refs or content ids, named for the report: a blob
 * referenced from any of them is kept. A source that cannot be read (a missing agent-sessions
 * directory included: the server makes it at start) stops the collection before anything is
 * deleted, and a deployment whose agent sessions are not all here is refused (see
 * {@link BlobRootsOptions}).
 */
export function blobRoots(
  services: Pick<Services, "config" | "shared" | "sessionBlobs" | "uploads">,
  options: BlobRootsOptions = {},
): BlobRootSource[] {
  assertSessionsCovered(services.config, options);
  const sessionDirs = [
    join(services.config.dataDir, AGENT_SESSIONS_DIR),
    ...(options.otherAgentSessionsDirs ?? []),
  ];
  return [
    {
      // Session files, their tool outputs (`<id>.<tool>.log`) and subagent outputs (`<id>.md`).
      name: "agent sessions",
      refs: () => scanFilesForBlobRefs(sessionDirs),
    },
    {
      // Posted items and their full payloads.
      name: "threads",
      refs: () => scanObjectStoreForBlobRefs(services.shared, { prefix: THREADS_PREFIX }),
    },
    {
      name: "content refs",
      refs: () => iterateContentRefIds({ records: services.shared, prefix: CONTENT_REFS_PREFIX }),
    },
    {
      // Every version of every session's hot state: refs in its text, and its artifact_index ids
      // (which outlive the content records they were made from).
      name: "hot state",
      refs: () => hotStateRefs(services.shared),
    },
    {
      // Captured sessions stored between container runs (every owner's), read decompressed.
      name: "session blobs",
      refs: () => sessionBlobRefs(services.sessionBlobs),
    },
    {
      // Uploaded files that embed refs (a JSON log, a session export).
      name: "uploads",
      refs: () => scanObjectStoreForBlobRefs(services.uploads.store, { prefix: "sessions/" }),
    },
  ];
}

async function* hotStateRefs(shared: Services["shared"]): AsyncGenerator<string> {
  yield* scanObjectStoreForBlobRefs(shared, { prefix: HOT_STATE_PREFIX });
  yield* iterateHotStateContentIds({ store: shared, prefix: HOT_STATE_PREFIX });
}

/**
 * The refs inside every stored session archive. Each archive decompresses to the size recorded
 * with it; one that claims less than it holds fails (TOO_LARGE) and stops the collection rather
 * than being scanned in part.
 */
export async function* sessionBlobRefs(repository: SessionBlobRepository): AsyncGenerator<string> {
  for await (const record of iterateSessionBlobs(repository)) {
    const bytes = decompressBounded(record.blob, record.codec, { maxBytes: record.rawSizeBytes });
    yield* scanBytesForBlobRefs(bytes);
  }
}
