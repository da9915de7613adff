import type { BlobRoots, OwnedBlobStore } from "@stowage/blob-store";
import type { Notifier, ObjectStore, OperationOptions, Principal } from "@stowage/core";
import type { HotStateStoreEnvOptions, PromptMetricsLog } from "@stowage/hot-state";
import type { SessionBlobRepository } from "@stowage/sessions";
import type { UploadService } from "@stowage/uploads";
import type { DeletionAudit } from "./shared/deletion-audit.js";
import type { RegisteredSessions } from "./shared/registered-sessions.js";
import type { SweepContext } from "./sweep.js";

/** What a deployment is built on; each store of the table opens a principal's view from it. */
export interface Deployment {
  /** The store every process of the deployment shares (S3, PostgreSQL, or the data directory). */
  shared: ObjectStore;
  /** Tells every process's subscribers of new thread items (PostgreSQL LISTEN/NOTIFY, or memory). */
  notifier: Notifier;
  /** The directory of every principal's agent session files on this host. */
  agentSessionsDir: string;
  /** Captured sessions kept between container runs; the `sessionBlobs` store needs it. */
  sessionBlobs?: SessionBlobRepository;
  /** Uploads through signed URLs; the `uploads` store needs it. */
  uploads?: UploadService;
  /** A principal's prompt-metrics log given its owner (`@stowage/storage-postgres/metrics`); the `promptMetrics` store needs it. */
  promptMetricsFor?: (owner: string) => PromptMetricsLog;
  /** Options of every principal's hot-state store (`keepVersions`). */
  hotState?: HotStateStoreEnvOptions;
  /** Uploads last modified longer ago than this many days go in a sweep; default: kept. */
  uploadRetentionDays?: number;
  /** How far ahead a principal may set an expiry (`Stowage.extendExpiry`), in days; default 30. */
  maxExpiryDays?: number;
  /**
   * Days a deleted session stays in its owner's trash before a sweep purges it (`0`: deleted at
   * once); default 7. `deleteSession`'s `trashDays` overrides it per call.
   */
  trashDays?: number;
  /**
   * Whether a thread's posts have their secrets redacted (thread-items' `redactSecrets`); default
   * `true`. `false` for a deployment whose threads are never shared.
   */
  redactSecrets?: boolean;
}

/** What a store is opened with for one principal. */
export interface StoreContext {
  deployment: Deployment;
  principal: Principal;
  /** `user:alice`: the owner recorded with what the principal stores. */
  owner: string;
  /** `user/alice`: the principal's namespace below a store's prefix. */
  namespace: string;
  /** The principal's view of the deployment's blobs (only the blobs it stored). */
  blobs: OwnedBlobStore;
  /** The session ids registered in the principal's namespace. */
  registeredSessions: RegisteredSessions;
  /** The principal's deletion audit, for a store that deletes outside a session's deletion. */
  deletionAudit: DeletionAudit;
}

/** What a store's deletion of one session gets: the principal's store, and who asked. */
export interface SessionDeletionContext extends OperationOptions {
  principal: Principal;
  owner: string;
  /** The dispatcher token the caller holds, for a store that refuses others (hot state). */
  dispatcherToken?: string;
}

/** What garbage collection passes a store when it reads its roots. */
export interface RootsContext {
  deployment: Deployment;
  /** Agent-session directories of the deployment's other hosts, as mounted here. */
  otherAgentSessionsDirs: readonly string[];
}

interface StoreBehaviour<Store> {
  /** Opens the principal's view; called once per principal and kept. */
  open(context: StoreContext): Store;
  /**
   * Removes everything one session has in this store, idempotently (a deletion cut short is sent
   * again); what it returns is reported under the store's name. `"principal-wide"`: the store
   * holds nothing per session (content refs belong to the principal), said so explicitly.
   */
  deleteSession:
    | ((store: Store, sessionId: string, context: SessionDeletionContext) => Promise<unknown>)
    | "principal-wide";
  /**
   * Refuses (throws) a deletion before anything is deleted from any store; hot state refuses
   * one without its dispatcher's token.
   */
  checkDeletion?(store: Store, sessionId: string, context: SessionDeletionContext): Promise<void>;
  /**
   * What the store does when its session goes to the trash, after every `checkDeletion` passed:
   * hot state ends the dispatcher's claim (with its token), so the purge later needs no token.
   */
  onTrash?(store: Store, sessionId: string, context: SessionDeletionContext): Promise<void>;
  /** Bytes the session holds in this store, listed with it in the trash (uploads, stored sessions). */
  trashBytes?(store: Store, sessionId: string, context: SessionDeletionContext): Promise<number>;
  /**
   * Where one session's objects are in the shared store, given the principal's namespace
   * (`user/alice`): their bytes are listed with the session in the trash (threads: its job's
   * index, items and full payloads; hot state: its versions).
   */
  sessionPrefixes?(namespace: string, sessionId: string): string[];
  /**
   * Runs in the deployment's periodic sweep (expiry, retention), in bounded batches; returns how
   * many things went, and records each batch in the deletion audit (`context.audit`) as it goes.
   */
  sweep?(deployment: Deployment, context: SweepContext): Promise<number>;
}

/**
 * One row of a deployment's table: a store every principal has, where it lives, how it opens,
 * what deleting a session removes from it, and where garbage collection finds the blob refs it
 * holds. A store in the shared store names its `prefix` (every principal's data below
 * `<prefix><kind>/<id>/`); its roots are then the refs found under the prefix unless it says
 * otherwise. A store elsewhere (a database, the file system, the upload store) must name its
 * `blobRefs`, or `"none"`: forgetting its roots cannot happen silently.
 */
export type StoreDefinition<Store = unknown> = StoreBehaviour<Store> &
  (
    | {
        prefix: string;
        blobRefs?: ((context: RootsContext) => BlobRoots) | "none";
      }
    | {
        prefix?: undefined;
        blobRefs: ((context: RootsContext) => BlobRoots) | "none";
      }
  );

/** A row of the table, typed by what it opens. */
export function defineStore<Store>(definition: StoreDefinition<Store>): StoreDefinition<Store> {
  return definition;
}

/** A deployment's table: store name → row, in the order sessions are deleted. */
// biome-ignore lint/suspicious/noExplicitAny: each row opens its own type; `OpenedStore` gives it back.
export type StoreTable = Record<string, StoreDefinition<any>>;

/** What a row opens. */
export type OpenedStore<Row> = Row extends StoreDefinition<infer Store> ? Store : never;
