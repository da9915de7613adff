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
import { type HotState, invalidValue } from "../schemas/schemas.js";
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

/** Options of `createHotStateStore` (defaults in the README); the build options apply to every write. */
export interface HotStateStoreOptions extends BuildHotStateOptions {
  /** Any ObjectStore whose create-only puts are atomic (fs, PostgreSQL, S3 with conditional writes, memory). */
  store: ObjectStore;
  prefix?: string;
  now?: () => Date;
  keepVersions?: number;
}

/** Options of a write: the version it replaces (0: none yet; default the dispatcher's own), or CONFLICT. */
export interface HotStateWriteOptions extends OperationOptions {
  expectedVersion?: number;
}

/** The token `claimDispatcher` returned, for a claimed session. */
export interface HotStateDispatcherOptions {
  token?: string;
}

/** Options of the claim's methods and of `deleteSession`: the claim's token, if held. */
export interface HotStateClaimOptions extends OperationOptions, HotStateDispatcherOptions {}

/** Who holds a session's dispatcher claim, as `claimStatus` sees it for a token. */
export type HotStateClaimStatus = ClaimHolding;

/** What `claimDispatcher` returns: the only copy of the token; the store keeps its hash. */
export interface HotStateDispatcherClaim {
  sessionId: string;
  token: string;
}

/** Reads any session's stored hot state (`null` where none); INTEGRITY for a damaged version. It cannot write. */
export interface HotStateReader {
  latest(sessionId: string, options?: OperationOptions): Promise<HotStateVersion | null>;
  get(sessionId: string, version: number, options?: OperationOptions): Promise<HotStateVersion | null>;
}

/** The one writer of a session's stored hot state. */
export interface HotStateStoreDispatcher {
  readonly role: "dispatcher";
  readonly sessionId: string;
  /** The version this dispatcher last loaded or wrote (the base of its next write); `null` before either. */
  current(): HotStateVersion | null;
  load(options?: OperationOptions): Promise<HotStateVersion | null>;
  /** Fits `input` and stores it as the next version: CONFLICT or FORBIDDEN checked before fitting. */
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
  /** Only the returned token writes from then on; CONFLICT (`DISPATCHER_CLAIMED`) but for the holder's retry. */
  claimDispatcher(sessionId: string, options?: HotStateClaimOptions): Promise<HotStateDispatcherClaim>;
  /** Ends the claim (its holder's `token`, else FORBIDDEN `NOT_DISPATCHER`); the versions stay. */
  releaseDispatcher(sessionId: string, options: HotStateClaimOptions): Promise<void>;
  claimStatus(sessionId: string, options?: HotStateClaimOptions): Promise<HotStateClaimStatus>;
  reader: HotStateReader;
  /** Deletes every version (the next is 1 again); a claimed session only with its token, the claim last. */
  deleteSession(sessionId: string, options?: HotStateClaimOptions): Promise<void>;
}

// Competing dispatchers are settled by create-only puts alone: where two of them can both "create"
// a key (S3 without conditional writes), the loser would silently replace the winner's version.
function assertAtomicStore(store: ObjectStore): void {
  if (typeof store?.put !== "function") {
    throw invalidValue("createHotStateStore needs an ObjectStore", store);
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
 * A versioned hot state per session: every write is a new object `<prefix><sessionId>/<version>.json`
 * put create-only with the previous version's hash (a chain never rewritten; the second writer of a
 * version gets CONFLICT). Versions are contiguous, so the newest is probed forward from the last seen.
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
      token: await claimSession(ctx, sessionId, op, token),
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
