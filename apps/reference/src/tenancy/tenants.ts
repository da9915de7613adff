import { createSessionFiles, type SessionFiles } from "@stowage/artifacts";
import { type BlobStore, createOwnedBlobStore, type OwnedBlobStore } from "@stowage/blob-store";
import { type Notifier, type ObjectStore, type OperationOptions, StowageError } from "@stowage/core";
import {
  type ContentRegistry,
  createContentRegistry,
  createHotStateStore,
  createPromptMetricsLog,
  type HotStateStore,
  type HotStateStoreEnvOptions,
  type PromptMetricsLog,
} from "@stowage/hot-state";
import type {
  CreateSessionBlobInput,
  ListSessionBlobsOptions,
  SessionBlobRecord,
  SessionBlobRepository,
  SessionBlobSummaryPage,
} from "@stowage/sessions";
import { createThreadFeeds, type ThreadFeeds } from "@stowage/thread-items";
import type { Principal, SessionDeletion, UploadService } from "@stowage/uploads";
import { agentSessionsSegments, ownerOf } from "./principal-layout.js";
import { type RegisteredSessions, registeredSessionsOf } from "./registered-sessions.js";

/**
 * Everything one principal (a user or an org) may reach, each addressed inside its own namespace:
 * another principal's things are not hidden by a check that could be forgotten, they are simply
 * not in this principal's namespace. Routes only ever see a tenant.
 */
export interface Tenant {
  principal: Principal;
  /** `user:alice`, `org:acme`: the owner recorded with what the tenant stores (session blobs). */
  owner: string;
  /** Agent sessions: `<agent-sessions>/<kind>/<id>/<timestamp>_<sessionId>.jsonl` and their artifacts. */
  agentSessions: SessionFiles;
  /**
   * The tenant's registered session ids, in the shared store, so that every process agrees which
   * sessions exist (uploads need one): `registered-sessions/<kind>/<id>/<sessionId>`.
   */
  registeredSessions: RegisteredSessions;
  /** Job threads under `<kind>/<id>/` of the shared thread store. */
  threads: ThreadFeeds;
  /**
   * Content refs of bootstrap context: this tenant's records, content in the shared blob store
   * stored through {@link blobs}, so the tenant can also read a ref's content as a blob.
   */
  registry: ContentRegistry;
  /** The shared blob store as this tenant sees it: only the blobs it stored. */
  blobs: OwnedBlobStore;
  /** The dispatcher's hot state of each session, versioned, in the shared store under `hot-state/<kind>/<id>/`. */
  hotState: HotStateStore;
  /** Prompt metrics of each model call: the database's table when configured, else JSON Lines in the shared store. */
  promptMetrics: PromptMetricsLog;
}

/**
 * A tenant of the server: also its stored session blobs and its uploads, each bound to the
 * tenant's principal, so that no route passes an owner (and none can pass the wrong one).
 */
export interface ServerTenant extends Tenant {
  sessionBlobs: TenantSessionBlobs;
  uploads: TenantUploads;
}

/** The session blobs one tenant stored: the repository with the tenant's owner filled in. */
export interface TenantSessionBlobs {
  create(
    input: Omit<CreateSessionBlobInput, "owner">,
    options?: OperationOptions,
  ): Promise<SessionBlobRecord>;
  getLatestForRequest(requestId: string, options?: OperationOptions): Promise<SessionBlobRecord | null>;
  getBySessionId(sessionId: string, options?: OperationOptions): Promise<SessionBlobRecord | null>;
  /** Deletes the tenant's sessions of a request; NOT_FOUND when it stored none (another's look the same). */
  deleteForRequest(requestId: string, options?: OperationOptions): Promise<number>;
  /**
   * Deletes the tenant's records of one session id, whatever request they were stored for; 0 when
   * there are none (deleting a session deletes whatever it has, and sending it again finds nothing).
   */
  deleteForSession(sessionId: string, options?: OperationOptions): Promise<number>;
  /** One page of the tenant's live stored sessions, without their blobs, in the order they were stored. */
  list(options?: ListSessionBlobsOptions): Promise<SessionBlobSummaryPage>;
}

/** One tenant's uploads: the upload service with the tenant's principal filled in. */
export interface TenantUploads {
  /** The upload API (`/agents/*`) on behalf of the tenant. */
  handle(request: Request): Promise<Response>;
  /**
   * Deletes every upload of one of the tenant's sessions and revokes its outstanding upload URLs;
   * NOT_FOUND (reason `SESSION_NOT_FOUND`) when the session is not registered in the tenant's
   * namespace (nor being deleted).
   */
  deleteSession(sessionId: string, options?: OperationOptions): Promise<SessionDeletion>;
}

// Kept importable from here; they live in their own module so the CLI loads them alone.
export { type RegisteredSessions, registeredSessionsOf } from "./registered-sessions.js";

export interface TenantsOptions {
  /** The directory of every principal's agent sessions. */
  agentSessionsDir: string;
  /** Where threads, blob marks and content-ref records live (shared between processes when configured so). */
  shared: ObjectStore;
  blobs: BlobStore;
  notifier: Notifier;
  /** A tenant's metrics log given its owner (`user:alice`); default: JSON Lines in `shared`. */
  promptMetricsFor?: (owner: string) => PromptMetricsLog;
  /** Options of every tenant's hot-state store (`keepVersions`, from `STOWAGE_HOT_STATE_KEEP_VERSIONS`). */
  hotState?: HotStateStoreEnvOptions;
}

/** Where every tenant's threads live in the shared store, one namespace each below. */
export const THREADS_PREFIX = "threads/";

/** Where every tenant's content-ref records live in the shared store, one namespace each below. */
export const CONTENT_REFS_PREFIX = "content-refs/";

/** Where every tenant's hot-state versions live in the shared store, one namespace each below. */
export const HOT_STATE_PREFIX = "hot-state/";

/** Where every tenant's prompt metrics live in the shared store (without a database), one namespace each below. */
export const PROMPT_METRICS_PREFIX = "prompt-metrics/";

// Kept importable from here, where they always were.
export { agentSessionsDirOf, ownerOf } from "./principal-layout.js";

/**
 * The tenants of the app, one per principal, built on first use and kept: a tenant holds live
 * state (thread subscriptions) that every request of its principal must share.
 */
export function createTenants(options: TenantsOptions): (principal: Principal) => Tenant {
  const tenants = new Map<string, Tenant>();
  return (principal) => {
    const owner = ownerOf(principal);
    let tenant = tenants.get(owner);
    if (tenant) return tenant;
    const namespace = `${principal.kind}/${principal.id}`;
    const blobs = createOwnedBlobStore({
      blobs: options.blobs,
      owner,
      marks: options.shared,
      prefix: "blob-owners/",
    });
    tenant = {
      principal: { kind: principal.kind, id: principal.id },
      owner,
      // Opened below the agent-sessions directory without following a link: a link planted at
      // `<kind>` or `<kind>/<id>` (at another tenant's sessions) is refused, not followed.
      agentSessions: createSessionFiles({
        dir: options.agentSessionsDir,
        segments: agentSessionsSegments(principal),
      }),
      registeredSessions: registeredSessionsOf(options.shared, principal),
      threads: createThreadFeeds({
        store: options.shared,
        prefix: `${THREADS_PREFIX}${namespace}`,
        notifier: options.notifier,
      }),
      // Content by hash in the tenant's blob view (marked as the tenant's, so it may read it as a
      // blob too); records carry no address: a `file://` path must never reach a prompt or a client.
      registry: createContentRegistry({
        content: blobs,
        records: options.shared,
        prefix: `${CONTENT_REFS_PREFIX}${namespace}/`,
      }),
      blobs,
      hotState: createHotStateStore({
        store: options.shared,
        prefix: `${HOT_STATE_PREFIX}${namespace}/`,
        ...options.hotState,
      }),
      promptMetrics:
        options.promptMetricsFor?.(owner) ??
        createPromptMetricsLog({ store: options.shared, prefix: `${PROMPT_METRICS_PREFIX}${namespace}/` }),
    };
    tenants.set(owner, tenant);
    return tenant;
  };
}

/** What a server's tenants have beyond the stores: the session-blob repository and the upload service. */
export interface ServerTenantsOptions extends TenantsOptions {
  sessionBlobs: SessionBlobRepository;
  uploads: UploadService;
}

/** The server's tenants: {@link createTenants} with each tenant's session blobs and uploads bound to it. */
export function createServerTenants(options: ServerTenantsOptions): (principal: Principal) => ServerTenant {
  const tenantOf = createTenants(options);
  const served = new WeakMap<Tenant, ServerTenant>();
  const { sessionBlobs, uploads } = options;
  return (principal) => {
    const tenant = tenantOf(principal);
    let server = served.get(tenant);
    if (server) return server;
    const { owner } = tenant;
    server = {
      ...tenant,
      sessionBlobs: {
        create: (input, opts) => sessionBlobs.create({ ...input, owner }, opts),
        getLatestForRequest: (requestId, opts) => sessionBlobs.getLatestForRequest(owner, requestId, opts),
        getBySessionId: (sessionId, opts) => sessionBlobs.getBySessionId(owner, sessionId, opts),
        list: (opts) => sessionBlobs.listByOwner(owner, opts),
        async deleteForRequest(requestId, opts) {
          const deleted = await sessionBlobs.deleteForRequest(owner, requestId, opts);
          if (deleted === 0) {
            throw new StowageError("NOT_FOUND", `no stored session for request ${requestId}`);
          }
          return deleted;
        },
        deleteForSession: (sessionId, opts) => sessionBlobs.deleteForSession(owner, sessionId, opts),
      },
      uploads: {
        handle: (request) => uploads.handleUploadRequest(request, { principal: tenant.principal }),
        async deleteSession(sessionId, opts = {}) {
          // A session being deleted still has its uploads deleted (by its deletion, or again).
          if ((await tenant.registeredSessions.state(sessionId, opts)) === null) {
            throw new StowageError("NOT_FOUND", `no session ${sessionId}`, { reason: "SESSION_NOT_FOUND" });
          }
          return uploads.deleteSessionUploads(tenant.principal, sessionId, opts);
        },
      },
    };
    served.set(tenant, server);
    return server;
  };
}
