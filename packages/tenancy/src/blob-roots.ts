import { type BlobRootSource, scanObjectStoreForBlobRefs } from "@stowage/blob-store";
import { StowageError } from "@stowage/core";
import type { Deployment, StoreTable } from "./store-definition.js";

/** What garbage collection may take as the deployment's agent sessions; see `Stowage.blobRoots`. */
export interface BlobRootsOptions {
  /**
   * The operator's word that this host's agent-sessions directory holds every agent session of
   * the deployment (one host, or several processes on one data directory). Needed when the shared
   * store is shared across hosts and no other host's directory is given.
   */
  singleHost?: boolean;
  /** The agent-sessions directories of the deployment's other hosts, as mounted here: scanned beside this one. */
  otherAgentSessionsDirs?: readonly string[];
}

/**
 * One root source per store of the table that holds refs: its own `blobRefs`, or the refs found
 * under its prefix in the shared store. UNAVAILABLE (reason `ROOTS_NOT_SHARED`) where the shared
 * store is shared across hosts but agent session files stay on each host, unless every host's
 * sessions are covered: a collection from one host would delete blobs only another host's
 * sessions reference.
 */
export function blobRootsOf(
  stores: StoreTable,
  deployment: Deployment,
  sharedAcrossHosts: boolean,
  options: BlobRootsOptions,
): BlobRootSource[] {
  const otherAgentSessionsDirs = options.otherAgentSessionsDirs ?? [];
  if (sharedAcrossHosts && !options.singleHost && otherAgentSessionsDirs.length === 0) {
    throw new StowageError(
      "UNAVAILABLE",
      "blobs are shared by every host (S3 or PostgreSQL is configured) but agent sessions stay on the disk of the host that wrote them: " +
        "collecting from here could delete blobs only another host's sessions reference. Run it with --single-host if this data " +
        "directory holds every agent session of the deployment, or give each other host's agent-sessions directory with --agent-sessions-dir",
      { reason: "ROOTS_NOT_SHARED" },
    );
  }
  const context = { deployment, otherAgentSessionsDirs };
  const sources: BlobRootSource[] = [];
  for (const [name, row] of Object.entries(stores)) {
    const { blobRefs, prefix } = row;
    if (blobRefs === "none") continue;
    if (blobRefs) sources.push({ name, refs: () => blobRefs(context) });
    else if (prefix !== undefined) {
      sources.push({ name, refs: () => scanObjectStoreForBlobRefs(deployment.shared, { prefix }) });
    }
  }
  return sources;
}
