import type { BlobRootSource, GarbageCollectionReport } from "@stowage/blob-store";
import {
  describeValue,
  type OperationOptions,
  type Principal,
  StowageError,
  trashDaysOf,
} from "@stowage/core";
import { type BlobRootsOptions, blobRootsOf } from "./blob-roots.js";
import { collectAuditedGarbage, type StowageGarbageCollectionOptions } from "./collect-garbage.js";
import { DEFAULT_STORES, type DefaultStores } from "./default-stores.js";
import {
  deleteSessionFrom,
  type SessionDeletionOptions,
  type SessionDeletionReport,
} from "./delete-session.js";
import { deleteSessionBlobs, type SessionBlobsDeletionReport } from "./delete-session-blobs.js";
import { deleteSessionUploads, type SessionUploadsDeletionReport } from "./delete-session-uploads.js";
import type { EncryptionOptions } from "./encryption/encryption-options.js";
import { sealSessionBlobs } from "./encryption/sealed-session-blobs.js";
import { type ExpiringThing, extendExpiry, listExpiring } from "./expiring.js";
import { namespaceOf, ownerOf } from "./shared/owner.js";
import { SHARED_LAYOUT } from "./shared/shared-layout.js";
import { type SharedStores, sealSharedStore, sharedStoresOver } from "./shared/shared-stores.js";
import type { Deployment, OpenedStore, StoreTable } from "./store-definition.js";
import { AUDIT_PRUNE_INTERVAL_MS, type SweepReport, sweepStores } from "./sweep.js";
import { blobTrash } from "./trash/blob-trash.js";
import type { ExpiredTrash } from "./trash/expired-trash.js";
import { storedSessionTrash } from "./trash/stored-session-trash.js";
import { sweepTrash } from "./trash/sweep-trash.js";
import { transcriptTrash } from "./trash/transcript-trash.js";
import {
  listTrash,
  moveSessionToTrash,
  purgeFromTrash,
  restoreFromTrash,
  trashGraceMsOf,
} from "./trash/trash.js";
import type { TrashedThing } from "./trash/trash-entries.js";
import { assertUploadRetentionAgrees, uploadTrash } from "./trash/upload-trash.js";

/** Options of {@link createStowage}: what the deployment is built on, and its table. */
export interface StowageOptions<Stores extends StoreTable> extends Deployment {
  /** Every principal's stores, one row each; default {@link DEFAULT_STORES}. */
  stores?: Stores;
  /**
   * Processes on other hosts share `shared` (S3 or PostgreSQL) while agent session files stay on
   * the host that wrote them: garbage collection then refuses to run without every host's
   * sessions (see `blobRoots`). Default false.
   */
  sharedAcrossHosts?: boolean;
  /**
   * Seals everything in `shared` (every principal's stores, blobs, the deployment's records) with
   * AES-256-GCM under data keys wrapped by `keyProvider` (default: `STOWAGE_ENCRYPTION_KEY`).
   * Default: stored in clear. See the README's "Encryption at rest".
   */
  encryption?: EncryptionOptions;
}

/** What every tenant has whatever its table: who it is, its blobs and its registered sessions. */
export interface TenantBase {
  principal: Principal;
  /** `user:alice`: the owner recorded with what the principal stores. */
  owner: string;
  blobs: ReturnType<SharedStores["ownedBlobs"]>;
  registeredSessions: ReturnType<SharedStores["registeredSessions"]>;
  /** What was deleted of the principal's (kept 400 days): read it, never written by a route. */
  deletionAudit: ReturnType<SharedStores["deletionAudit"]>;
}

/**
 * Everything one principal may reach, each store addressed inside its own namespace: another
 * principal's things are not hidden by a check that could be forgotten, they are simply not in
 * this principal's namespace.
 */
export type Tenant<Stores extends StoreTable = DefaultStores> = TenantBase & {
  readonly [Name in keyof Stores]: OpenedStore<Stores[Name]>;
};

/** A deployment of Stowage; see {@link createStowage}. */
export interface Stowage<Stores extends StoreTable = DefaultStores> extends SharedStores {
  /** What the deployment is built on. */
  readonly deployment: Deployment;
  /** Its table. */
  readonly stores: Stores;
  /** The principal's tenant, built on first use and kept (its threads hold live subscriptions). */
  tenant(principal: Principal): Tenant<Stores>;
  /**
   * Deletes one session of `principal`: by default moves it to the principal's trash for
   * `trashDays` (the call's, else the deployment's, else 7), where every store of it is
   * unreachable until it is restored or a sweep purges it; with `trashDays: 0`, deletes it now from
   * every store of the table, in its order, and its registration last. See {@link SessionDeletionReport}.
   */
  deleteSession(
    principal: Principal,
    sessionId: string,
    options?: SessionDeletionOptions,
  ): Promise<SessionDeletionReport>;
  /**
   * Deletes `principal`'s stored sessions of a request: by default into the trash of stored
   * sessions (they expire now; restore them there, by session id, until the `sessionBlobs` sweep
   * purges them `trashDays` later); with `trashDays: 0`, now, the request's activity with them.
   * See `delete-session-blobs.ts`.
   */
  deleteSessionBlobs(
    principal: Principal,
    requestId: string,
    options?: OperationOptions & { by?: string; trashDays?: number },
  ): Promise<SessionBlobsDeletionReport>;
  /**
   * Deletes the uploads of one of `principal`'s sessions: by default into the trash (each an
   * `upload` there, `by` who deleted them, until the uploads sweep purges them `trashDays` later);
   * with `trashDays: 0`, now, its URLs revoked. See `delete-session-uploads.ts`.
   */
  deleteSessionUploads(
    principal: Principal,
    sessionId: string,
    options?: OperationOptions & { by?: string; trashDays?: number },
  ): Promise<SessionUploadsDeletionReport>;
  /** What is in `principal`'s trash, soonest purged first, and the bytes it holds (counted in its storage). */
  listTrash(
    principal: Principal,
    options?: OperationOptions,
  ): Promise<{ items: TrashedThing[]; bytes: number }>;
  /**
   * Restores one thing from `principal`'s trash exactly as it was; NOT_FOUND (`NOT_IN_TRASH`)
   * when it is not there, CONFLICT (`TRASH_PURGING`) when its purge was decided first.
   */
  restoreFromTrash(
    principal: Principal,
    kind: string,
    id: string,
    options?: OperationOptions,
  ): Promise<TrashedThing>;
  /**
   * Purges one thing from `principal`'s trash now (the deletion it was spared, with its audit
   * rows by `by`); NOT_FOUND (`NOT_IN_TRASH`), CONFLICT (`TRASH_RESTORING`).
   */
  purgeFromTrash(
    principal: Principal,
    kind: string,
    id: string,
    options?: OperationOptions & { by?: string },
  ): Promise<SessionDeletionReport>;
  /** The roots garbage collection must read: one source per store of the table that holds refs. */
  blobRoots(options?: BlobRootsOptions): BlobRootSource[];
  /**
   * Collects the deployment's unreferenced blobs (blob-store's `collectGarbage` over {@link blobRoots}
   * and the owners' marks), each deleted blob recorded in the deletion audit of every principal that
   * had stored it (`gc`), or of the deployment when none had.
   */
  collectGarbage(
    options?: StowageGarbageCollectionOptions & BlobRootsOptions,
  ): Promise<GarbageCollectionReport>;
  /**
   * What `principal` holds that expires within `withinMs` from now, soonest first (stored sessions,
   * and uploads where the deployment keeps them for a time); see `listExpiring`.
   */
  expiring(principal: Principal, withinMs: number, options?: OperationOptions): Promise<ExpiringThing[]>;
  /**
   * Sets when one of the principal's stored sessions expires, within the deployment's
   * `maxExpiryDays` (INVALID_INPUT `EXPIRY_TOO_LATE` beyond); NOT_FOUND when it holds none.
   */
  extendExpiry(
    principal: Principal,
    kind: string,
    id: string,
    expiresAt: Date,
    options?: OperationOptions,
  ): Promise<{ kind: string; id: string; expiresAt: string; changed: number }>;
  /**
   * One run of every store's sweep (expiry, retention), each recording what it removed in the
   * deletion audit; then the trash's (sessions past their grace period purged, reported as
   * `trash`); then, once a day per process, the audits' own pruning past their retention
   * (reported as `deletionAudit`). A store that fails does not stop the others.
   */
  sweep(options?: OperationOptions): Promise<SweepReport>;
}

const BASE_NAMES = new Set(["principal", "owner", "blobs", "registeredSessions", "deletionAudit"]);

/** INVALID_INPUT unless every row's prefix stands apart from every other and from the deployment's own records. */
function assertTableApart(stores: StoreTable): void {
  const taken: { name: string; prefix: string }[] = Object.entries(SHARED_LAYOUT).map(([name, prefix]) => ({
    name: `the deployment's ${name}`,
    prefix,
  }));
  for (const [name, row] of Object.entries(stores)) {
    if (BASE_NAMES.has(name)) {
      throw new StowageError(
        "INVALID_INPUT",
        `a store may not be named ${describeValue(name)}: every tenant has it already`,
      );
    }
    if (
      typeof row.open !== "function" ||
      !(typeof row.deleteSession === "function" || row.deleteSession === "principal-wide")
    ) {
      throw new StowageError(
        "INVALID_INPUT",
        `store ${name} must have open(context) and deleteSession(store, sessionId, context) or deleteSession: "principal-wide"`,
      );
    }
    if (row.prefix === undefined) {
      // Roots that cannot be found under a prefix must be named: never forgotten by omission.
      if (row.blobRefs === undefined) {
        throw new StowageError(
          "INVALID_INPUT",
          `store ${name} keeps nothing in the shared store under a prefix, so it must name its blobRefs (or "none")`,
        );
      }
      continue;
    }
    if (!/^[a-z0-9][a-z0-9-]*\/$/.test(row.prefix)) {
      throw new StowageError(
        "INVALID_INPUT",
        `store ${name}: prefix must be lowercase letters, digits and "-" ending in "/", got ${describeValue(row.prefix)}`,
      );
    }
    const clash = taken.find(
      ({ prefix }) => prefix.startsWith(row.prefix!) || row.prefix!.startsWith(prefix),
    );
    if (clash) {
      throw new StowageError(
        "INVALID_INPUT",
        `store ${name}: prefix ${describeValue(row.prefix)} overlaps ${clash.name}'s ${describeValue(clash.prefix)}`,
      );
    }
    taken.push({ name: `store ${name}`, prefix: row.prefix });
  }
}

/**
 * A Stowage deployment from one table: `tenant(principal)` opens every store of the principal
 * (each inside its namespace), `deleteSession` deletes a session from every store, `blobRoots`
 * gives garbage collection every store's refs, and `sweep` runs every store's expiry: all derived
 * from the same rows, so a store added to the table is deleted with its sessions and protected by
 * garbage collection without a change anywhere else.
 */
export function createStowage<Stores extends StoreTable = DefaultStores>(
  options: StowageOptions<Stores>,
): Stowage<Stores> {
  const {
    stores = DEFAULT_STORES as unknown as Stores,
    sharedAcrossHosts = false,
    encryption,
    ...given
  } = options;
  assertTableApart(stores);
  assertUploadRetentionAgrees(given);
  const sealed = sealSharedStore(given.shared, encryption);
  const shared = sharedStoresOver(given.shared, sealed);
  // Every store of the table opens on the sealed store when encryption is on, and stored sessions
  // (a database's rows, not the shared store) are sealed under the same data keys.
  const deployment: Deployment = {
    ...given,
    shared: shared.shared,
    ...(sealed && given.sessionBlobs
      ? { sessionBlobs: sealSessionBlobs(given.sessionBlobs, sealed.keys) }
      : {}),
  };
  // Expired stored sessions and uploads past retention wait in their owners' trash where the
  // table stores them.
  const graceMs = trashGraceMsOf(deployment.trashDays);
  const expiredTrashes = new Map<string, ExpiredTrash>([
    // Blobs a collection took: in every deployment, whatever its table.
    ["blob", blobTrash(shared, graceMs)],
    [
      "storedSession",
      storedSessionTrash(
        "sessionBlobs" in stores && deployment.sessionBlobs
          ? { repository: deployment.sessionBlobs, graceMs }
          : undefined,
      ),
    ],
    [
      "upload",
      uploadTrash(
        "uploads" in stores && deployment.uploads
          ? { uploads: deployment.uploads, retentionDays: deployment.uploadRetentionDays, graceMs }
          : undefined,
      ),
    ],
    // What the Agent SDK deleted from the principal's SessionStore: in that store's own trash.
    ["transcript", transcriptTrash("agentSdkSessions" in stores)],
  ]);
  const tenants = new Map<string, Tenant<Stores>>();
  let auditsPrunedAt = Number.NEGATIVE_INFINITY;

  function tenant(principal: Principal): Tenant<Stores> {
    const owner = ownerOf(principal);
    const known = tenants.get(owner);
    if (known) return known;
    const own: Principal = { kind: principal.kind, id: principal.id };
    const base: TenantBase = {
      principal: own,
      owner,
      blobs: shared.ownedBlobs(own),
      registeredSessions: shared.registeredSessions(own),
      deletionAudit: shared.deletionAudit(own),
    };
    const context = { ...base, deployment, namespace: namespaceOf(own) };
    const opened: Record<string, unknown> = { ...base };
    for (const [name, row] of Object.entries(stores)) opened[name] = row.open(context);
    const made = Object.freeze(opened) as Tenant<Stores>;
    tenants.set(owner, made);
    return made;
  }

  return {
    ...shared,
    deployment,
    stores,
    tenant,
    deleteSession: async (principal, sessionId, deletionOptions = {}) => {
      const days = trashDaysOf(deletionOptions.trashDays, deployment.trashDays);
      return days === 0
        ? deleteSessionFrom(stores, tenant(principal), sessionId, deletionOptions)
        : moveSessionToTrash(deployment.shared, stores, tenant(principal), sessionId, days, deletionOptions);
    },
    deleteSessionBlobs: (principal, requestId, deletionOptions = {}) =>
      deleteSessionBlobs(tenant(principal) as never, deployment.trashDays, requestId, deletionOptions),
    deleteSessionUploads: (principal, sessionId, deletionOptions = {}) =>
      deleteSessionUploads(tenant(principal) as never, deployment.trashDays, sessionId, deletionOptions),
    listTrash: async (principal, operation = {}) => {
      const expired = await Promise.all(
        [...expiredTrashes.values()].map((trash) => trash.list(tenant(principal), operation)),
      );
      return listTrash(deployment.shared, tenant(principal), operation, expired.flat());
    },
    restoreFromTrash: (principal, kind, id, operation = {}) =>
      expiredTrashes.get(kind)?.restore(tenant(principal), id, operation) ??
      restoreFromTrash(deployment.shared, tenant(principal), kind, id, operation),
    purgeFromTrash: (principal, kind, id, operation = {}) =>
      expiredTrashes.get(kind)?.purge(tenant(principal), id, operation) ??
      purgeFromTrash(deployment.shared, stores, tenant(principal), kind, id, operation),
    blobRoots: (rootsOptions = {}) => blobRootsOf(stores, deployment, sharedAcrossHosts, rootsOptions),
    collectGarbage: ({ singleHost, otherAgentSessionsDirs, ...gcOptions } = {}) =>
      collectAuditedGarbage(
        shared,
        blobRootsOf(stores, deployment, sharedAcrossHosts, {
          ...(singleHost === undefined ? {} : { singleHost }),
          ...(otherAgentSessionsDirs === undefined ? {} : { otherAgentSessionsDirs }),
        }),
        gcOptions,
        trashGraceMsOf(deployment.trashDays),
      ),
    // A table given may lack the stores that hold expiring things: both look before they read.
    expiring: (principal, withinMs, operation = {}) =>
      listExpiring(tenant(principal) as never, deployment, withinMs, operation),
    extendExpiry: (principal, kind, id, expiresAt, operation = {}) =>
      extendExpiry(tenant(principal) as never, deployment, kind, id, expiresAt, operation),
    sweep: (sweepOptions = {}) => {
      const pruneAudits = Date.now() - auditsPrunedAt >= AUDIT_PRUNE_INTERVAL_MS;
      if (pruneAudits) auditsPrunedAt = Date.now();
      const trash = () => sweepTrash(deployment.shared, stores, tenant, sweepOptions);
      return sweepStores(stores, deployment, shared, { ...sweepOptions, pruneAudits, trash });
    },
  };
}
