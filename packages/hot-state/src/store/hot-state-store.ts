import {
  assertKeyDirectoryPrefix,
  assertSafeId,
  consoleLogger,
  describeValue,
  type ObjectStore,
  type OperationOptions,
  StowageError,
} from "@stowage/core";
import type { BuildHotStateOptions } from "../hot-state/build-hot-state.js";
import type { HotState } from "../schemas/schemas.js";
import {
  assertTokenShape,
  type ClaimHolding,
  claimHolding,
  claimSession,
  notDispatcher,
} from "./dispatcher-claim.js";
import { dispatcherFor } from "./dispatcher-write.js";
import {
  assertVersion,
  claimKey,
  type HotStateVersion,
  readLatest,
  readVersion,
  type StoreContext,
  sessionPrefix,
} from "./hot-state-versions.js";

/** Options of `createHotStateStore`; the build options apply to every write. */
export interface HotStateStoreOptions extends BuildHotStateOptions {
  /** Any ObjectStore whose create-only puts are atomic (fs, PostgreSQL, S3 with conditional writes, memory). */
  store: ObjectStore;
  /** Key prefix, `""` or ending in `/`. Default `"hot-state/"`. */
  prefix?: string;
  /** Clock of `writtenAt` and of claims. Default `new Date()`. */
  now?: () => Date;
  /** Versions kept per session: each write deletes older ones (oldest first). Default: every version. */
  keepVersions?: number;
}

/** Options of a write: the version it replaces (0: none yet; default the dispatcher's own), or CONFLICT. */
export interface HotStateWriteOptions extends OperationOptions {
  expectedVersion?: number;
}

/** Options of `dispatcherFor`: the token `claimDispatcher` returned, for a claimed session. */
export interface HotStateDispatcherOptions {
  token?: string;
}

/** Options of `claimDispatcher`, `releaseDispatcher`, `claimStatus` and `deleteSession`: the claim's token, if held. */
export interface HotStateClaimOptions extends OperationOptions {
  token?: string;
}

/** Who holds a session's dispatcher claim, as `claimStatus` sees it for a token. */
export type HotStateClaimStatus = ClaimHolding;

/** What `claimDispatcher` returns: the only copy of the token; the store keeps its hash. */
export interface HotStateDispatcherClaim {
  sessionId: string;
  token: string;
}

/** Reads any session's stored hot state. It has no method that writes. */
export interface HotStateReader {
  /** The newest version, or `null` when the session has none. */
  latest(sessionId: string, options?: OperationOptions): Promise<HotStateVersion | null>;
  /** One version, or `null` when it was never written (or was pruned). INTEGRITY when its bytes are damaged. */
  get(sessionId: string, version: number, options?: OperationOptions): Promise<HotStateVersion | null>;
}

/** The one writer of a session's stored hot state. */
export interface HotStateStoreDispatcher {
  readonly role: "dispatcher";
  readonly sessionId: string;
  /** The version this dispatcher last loaded or wrote; `null` before either. */
  current(): HotStateVersion | null;
  /** Reads the newest version and makes it the base of the next write. */
  load(options?: OperationOptions): Promise<HotStateVersion | null>;
  /**
   * Fits `input` with `buildHotState` (in slices) and stores it as the next version, create-only:
   * CONFLICT (`details.version`, `details.latest`) when another dispatcher wrote it first,
   * FORBIDDEN (`NOT_DISPATCHER`) without the session's claim; both checked before fitting.
   */
  write(input: unknown, options?: HotStateWriteOptions): Promise<HotStateVersion>;
  /** Writes what `change` returns given the base state (`undefined` before the first version). */
  update(
    change: (current: Readonly<HotState> | undefined) => unknown,
    options?: OperationOptions,
  ): Promise<HotStateVersion>;
}

/** What `createHotStateStore` returns: dispatchers (hand them to the dispatcher only) and a reader. */
export interface HotStateStore {
  /** The writing handle of one session. Two handles of one session are two competing writers. */
  dispatcherFor(sessionId: string, options?: HotStateDispatcherOptions): HotStateStoreDispatcher;
  /**
   * Makes the caller the session's dispatcher for every process: then only writes with the
   * returned token succeed. A second claim is CONFLICT (`DISPATCHER_CLAIMED`), except the
   * holder's own (`{ token }`, a retry), which gets the same token back.
   */
  claimDispatcher(sessionId: string, options?: HotStateClaimOptions): Promise<HotStateDispatcherClaim>;
  /** Ends the claim (its holder's `token`, else FORBIDDEN `NOT_DISPATCHER`); the versions stay. */
  releaseDispatcher(sessionId: string, options: HotStateClaimOptions): Promise<void>;
  /** Whether the session's dispatcher is claimed, and by the holder of `token`. */
  claimStatus(sessionId: string, options?: HotStateClaimOptions): Promise<HotStateClaimStatus>;
  reader: HotStateReader;
  /**
   * Deletes every version of the session; its next write is version 1 again. A claimed session
   * only with its claim's `token` (FORBIDDEN `NOT_DISPATCHER`, nothing deleted), the claim last.
   */
  deleteSession(sessionId: string, options?: HotStateClaimOptions): Promise<void>;
}

/**
 * INVALID_INPUT unless `store` is an ObjectStore whose create-only puts are atomic: competing
 * dispatchers are settled by create-only puts alone, and where two of them can both "create" a
 * key (S3 without conditional writes) the loser would silently replace the winner's version.
 */
function assertAtomicStore(store: ObjectStore): void {
  if (typeof store?.put !== "function") {
    throw new StowageError(
      "INVALID_INPUT",
      `createHotStateStore needs an ObjectStore, got ${describeValue(store)}`,
    );
  }
  if (store.capabilities?.atomicCreateOnly === true) return;
  const message =
    "createHotStateStore needs an ObjectStore whose create-only puts are atomic (capabilities.atomicCreateOnly); " +
    `${describeValue(store.name)} is not, so two writers could overwrite each other. On S3, enable conditional writes.`;
  throw new StowageError("INVALID_INPUT", message, { reason: "NOT_ATOMIC_STORE" });
}

async function deleteSession(ctx: StoreContext, sessionId: string, token: unknown, op: OperationOptions) {
  // A token is needed only where a claim stands: deleting an unclaimed session needs none.
  const holding = await claimHolding(ctx, sessionId, token, op);
  if (holding === "other") throw notDispatcher(sessionId, true, "deletes it");
  const claim = claimKey(ctx, sessionId);
  const keys: string[] = [];
  for await (const item of ctx.store.iterate({ prefix: sessionPrefix(ctx, sessionId), signal: op.signal })) {
    // The claim goes last, and only when this caller holds it: a claim made meanwhile stays.
    if (item.key !== claim) keys.push(item.key);
  }
  const io = { signal: op.signal };
  // Newest first: a reader searching meanwhile never sees a gap below a version still there.
  for (const key of keys.reverse()) await ctx.store.delete(key, io);
  if (holding === "held") await ctx.store.delete(claim, io);
  ctx.seen.delete(sessionId);
}

/**
 * A versioned hot state per session over any ObjectStore with atomic create-only puts. Every
 * write is a new object `<prefix><sessionId>/<version>.json` put create-only, carrying the
 * previous version's hash: versions form a chain that is never rewritten, and the second writer
 * of a version gets CONFLICT. Versions are contiguous (from 1, or from the oldest one kept), so
 * the newest is found by probing (`head`) forward from the last one seen.
 */
export function createHotStateStore(options: HotStateStoreOptions): HotStateStore {
  const {
    store,
    prefix = "hot-state/",
    now = () => new Date(),
    keepVersions,
    ...buildOptions
  } = options ?? ({} as HotStateStoreOptions);
  assertAtomicStore(store);
  assertKeyDirectoryPrefix(prefix, "hot-state store prefix");
  if (keepVersions !== undefined) assertVersion(keepVersions, "keepVersions");
  const logger = buildOptions.logger ?? consoleLogger;
  const ctx: StoreContext = { store, prefix, now, keepVersions, buildOptions, logger, seen: new Map() };
  /** Checks the session id and the token's shape, then runs `action` with the rest of the options. */
  const withClaim =
    <T>(action: (sessionId: string, token: string | undefined, op: OperationOptions) => Promise<T>) =>
    async (sessionId: string, { token, ...op }: HotStateClaimOptions = {}) => {
      assertSafeId(sessionId, "sessionId");
      assertTokenShape(token);
      return action(sessionId, token, op);
    };

  return Object.freeze({
    dispatcherFor: (sessionId: string, handle?: HotStateDispatcherOptions) =>
      dispatcherFor(ctx, sessionId, handle),
    claimDispatcher: withClaim(async (sessionId, token, op) => ({
      sessionId,
      token: await claimSession(ctx, sessionId, token, op),
    })),
    releaseDispatcher: withClaim(async (sessionId, token, op) => {
      const holding = await claimHolding(ctx, sessionId, token, op);
      if (holding !== "held") throw notDispatcher(sessionId, holding === "other", "releases its claim");
      await store.delete(claimKey(ctx, sessionId), { signal: op.signal });
    }),
    claimStatus: withClaim((sessionId, token, op) => claimHolding(ctx, sessionId, token, op)),
    deleteSession: withClaim((sessionId, token, op) => deleteSession(ctx, sessionId, token, op)),
    reader: Object.freeze({
      // versionKey checks the session id (and the version) before anything is read.
      latest: async (sessionId: string, op: OperationOptions = {}) => readLatest(ctx, sessionId, op),
      get: async (sessionId: string, version: number, op: OperationOptions = {}) =>
        readVersion(ctx, sessionId, version, op),
    }),
  });
}
