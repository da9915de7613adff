import {
  assertKeyDirectoryPrefix,
  assertSafeId,
  consoleLogger,
  describeValue,
  type ObjectStore,
  type OperationOptions,
  StowageError,
} from "@stowage/core";
import { type BuildHotStateOptions, buildHotStateInSlices } from "../hot-state/build-hot-state.js";
import type { HotState } from "../schemas/hot-state-schema.js";
import { assertAtomicStore } from "./atomic-store.js";
import { assertTokenShape, claimHeldBy, createDispatcherClaims, notDispatcher } from "./dispatcher-claim.js";
import {
  assertVersion,
  decodeVersion,
  encodeVersion,
  type HotStateVersion,
  MAX_HOT_STATE_VERSION,
  versionKey,
} from "./hot-state-versions.js";
import { lastContiguous } from "./last-contiguous.js";

/** Where versions live inside the store unless a prefix is given. */
export const DEFAULT_HOT_STATE_PREFIX = "hot-state/";

/** Reads of `latest` retried when the version found was deleted (pruned) before it was read. */
const MAX_READ_ATTEMPTS = 5;
/** Old versions one write deletes at most when pruning (a longer backlog goes on at the next writes). */
const MAX_PRUNED_PER_WRITE = 64;
/** A version's name inside its session's directory. */
const VERSION_NAME = /^(\d{12})\.json$/;

/** Options of `createHotStateStore`; the build options apply to every write. */
export interface HotStateStoreOptions extends BuildHotStateOptions {
  /**
   * Any ObjectStore whose create-only puts are atomic (`capabilities.atomicCreateOnly`): fs,
   * PostgreSQL, S3 with conditional writes, memory. Any other is refused (`NOT_ATOMIC_STORE`).
   */
  store: ObjectStore;
  /** Key prefix, `""` or ending in `/`. Default {@link DEFAULT_HOT_STATE_PREFIX}. */
  prefix?: string;
  /** Clock of `writtenAt` and of claims. Default `new Date()`. */
  now?: () => Date;
  /**
   * Versions kept per session: each write deletes the versions older than the newest
   * `keepVersions` (oldest first). Default: every version is kept.
   */
  keepVersions?: number;
}

/** Options of a write: the version it is based on, when not the dispatcher's own. */
export interface HotStateWriteOptions extends OperationOptions {
  /**
   * The version this write replaces (0: the session has none yet). Default: the version this
   * dispatcher last loaded or wrote. The write is version `expectedVersion + 1`, or CONFLICT.
   */
  expectedVersion?: number;
}

/** Options of `dispatcherFor`. */
export interface HotStateDispatcherOptions {
  /**
   * The token `claimDispatcher` returned, for a session whose dispatcher role was claimed: its
   * writes need it. Leave it out for a session nobody claimed.
   */
  token?: string;
}

/**
 * Options of `claimDispatcher`, `releaseDispatcher` and `deleteSession`: the token of the
 * session's claim, where the caller holds it.
 */
export interface HotStateClaimOptions extends OperationOptions {
  /** The token `claimDispatcher` returned. */
  token?: string;
}

/** Who holds a session's dispatcher claim, as `claimStatus` sees it for a token. */
export type HotStateClaimStatus = "unclaimed" | "held" | "other";

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
   * Fits `input` with `buildHotState` and stores it as the next version, create-only: when
   * another dispatcher wrote that version first, this one gets CONFLICT (`details.version`,
   * `details.latest`) and nothing is overwritten; `load()` and decide again. FORBIDDEN
   * (`NOT_DISPATCHER`) when the session's dispatcher role was claimed with another token. Both
   * are checked before `input` is fitted, which is done in slices that let the event loop go on.
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
   * Makes the caller the session's dispatcher for every process: from now on only writes with
   * the returned token succeed, and only its holder releases the claim or deletes the session.
   * Once per session: a second claim is CONFLICT (`DISPATCHER_CLAIMED`), except the holder's own
   * (`{ token }`, a retry), which gets the same token back. For a server whose clients all hold
   * the same credentials.
   */
  claimDispatcher(sessionId: string, options?: HotStateClaimOptions): Promise<HotStateDispatcherClaim>;
  /**
   * Ends the claim (`{ token }` of its holder; FORBIDDEN `NOT_DISPATCHER` otherwise): the versions
   * stay, and the session is unclaimed, for the next dispatcher to claim.
   */
  releaseDispatcher(sessionId: string, options: HotStateClaimOptions): Promise<void>;
  /**
   * Whether the session's dispatcher is claimed, and by the holder of `token`: `unclaimed`,
   * `held` (by `token`) or `other`. For an app that checks, before a change only the holder may
   * make (deleting the session), that the change will be allowed.
   */
  claimStatus(sessionId: string, options?: HotStateClaimOptions): Promise<HotStateClaimStatus>;
  /** Read-only access for every other role. */
  reader: HotStateReader;
  /**
   * Deletes every version of the session (none is not an error); its next write is version 1
   * again, and readers in every process find that (a hint of a deleted version is searched
   * again). A claimed session is deleted only with its claim's `token` (FORBIDDEN
   * `NOT_DISPATCHER` otherwise, and nothing is deleted), and then its claim goes too; a claim
   * made while an unclaimed session is being deleted stays. For a session whose dispatcher has
   * stopped.
   */
  deleteSession(sessionId: string, options?: HotStateClaimOptions): Promise<void>;
}

function assertKeepVersions(keep: unknown): asserts keep is number | undefined {
  if (keep === undefined) return;
  if (typeof keep !== "number" || !Number.isInteger(keep) || keep < 1 || keep > MAX_HOT_STATE_VERSION) {
    throw new StowageError(
      "INVALID_INPUT",
      `keepVersions must be a whole number from 1 to ${MAX_HOT_STATE_VERSION}, got ${describeValue(keep)}`,
    );
  }
}

/**
 * A versioned hot state per session over any ObjectStore with atomic create-only puts. Every
 * write is a new object `<prefix><sessionId>/<version>.json` put create-only, carrying the
 * previous version's hash, so versions form a chain that is never rewritten and two dispatchers
 * cannot overwrite each other: the second writer of a version gets CONFLICT. Versions are
 * contiguous (from 1, or from the oldest one kept), so the newest is found by probing (`head`)
 * forward from the last one seen, in a few requests whatever the history.
 */
export function createHotStateStore(options: HotStateStoreOptions): HotStateStore {
  const {
    store,
    prefix = DEFAULT_HOT_STATE_PREFIX,
    now = () => new Date(),
    keepVersions,
    ...buildOptions
  } = options ?? ({} as HotStateStoreOptions);
  assertAtomicStore(store, "createHotStateStore");
  assertKeyDirectoryPrefix(prefix, "hot-state store prefix");
  assertKeepVersions(keepVersions);
  const logger = buildOptions.logger ?? consoleLogger;
  const sessionPrefix = (sessionId: string) => `${prefix}${sessionId}/`;
  const claimKey = (sessionId: string) => `${sessionPrefix(sessionId)}dispatcher.json`;
  const claims = createDispatcherClaims({ store, claimKey, now });
  // The newest version seen per session: where the next search starts. Only a hint: versions can
  // be deleted (pruned, or the session deleted and written again), so a read that finds the
  // hinted version gone searches again from the start.
  const seen = new Map<string, number>();

  const exists = async (sessionId: string, version: number, op: OperationOptions) =>
    (await store.head(versionKey(prefix, sessionId, version), op)) !== null;

  /** The oldest version kept (versions sort first in their directory), or null without any. */
  async function oldestVersion(sessionId: string, op: OperationOptions): Promise<number | null> {
    const { items } = await store.list({ prefix: sessionPrefix(sessionId), limit: 1, signal: op.signal });
    const match = items[0] && VERSION_NAME.exec(items[0].key.slice(sessionPrefix(sessionId).length));
    return match ? Number(match[1]) : null;
  }

  /** The newest version number (0: none), searched from the newest one seen. */
  async function latestVersion(sessionId: string, op: OperationOptions): Promise<number> {
    const probe = (version: number) => exists(sessionId, version, op);
    let latest = await lastContiguous(seen.get(sessionId) ?? 0, MAX_HOT_STATE_VERSION, probe);
    if (latest === 0) {
      // No version 1: none was written, or the oldest were pruned.
      const oldest = await oldestVersion(sessionId, op);
      if (oldest !== null) latest = await lastContiguous(oldest, MAX_HOT_STATE_VERSION, probe);
    }
    if (latest > 0) seen.set(sessionId, latest);
    else seen.delete(sessionId);
    return latest;
  }

  async function get(sessionId: string, version: number, op: OperationOptions = {}) {
    const bytes = await store.get(versionKey(prefix, sessionId, version), op);
    return bytes === null ? null : decodeVersion(bytes, sessionId, version);
  }

  async function latest(sessionId: string, op: OperationOptions): Promise<HotStateVersion | null> {
    for (let attempt = 0; attempt < MAX_READ_ATTEMPTS; attempt++) {
      const version = await latestVersion(sessionId, op);
      if (version === 0) return null;
      const stored = await get(sessionId, version, op);
      if (stored !== null) return stored;
      seen.delete(sessionId); // deleted since the hint was taken: search from the start
    }
    throw new StowageError(
      "UNAVAILABLE",
      `hot state ${sessionId} kept changing while its latest version was read; try again`,
    );
  }

  const reader: HotStateReader = Object.freeze({
    latest(sessionId: string, op: OperationOptions = {}) {
      assertSafeId(sessionId, "sessionId");
      return latest(sessionId, op);
    },
    get(sessionId: string, version: number, op: OperationOptions = {}) {
      assertSafeId(sessionId, "sessionId");
      assertVersion(version);
      return get(sessionId, version, op);
    },
  });

  /** FORBIDDEN unless `token` matches the session's claim, or there is no claim and no token. */
  async function assertDispatcher(sessionId: string, token: unknown, op: OperationOptions) {
    const claim = await store.get(claimKey(sessionId), op);
    const held = claim === null ? token === undefined : claimHeldBy(claim, sessionId, token);
    if (!held) {
      throw new StowageError(
        "FORBIDDEN",
        claim === null
          ? `hot state ${sessionId} has no claimed dispatcher, so no token is accepted for it`
          : `only the dispatcher of hot state ${sessionId} writes it: the token is missing or wrong`,
        { reason: "NOT_DISPATCHER", details: { sessionId } },
      );
    }
  }

  /** Deletes versions older than the newest `keepVersions`, oldest first, so those kept stay contiguous. */
  async function prune(sessionId: string, newest: number, op: OperationOptions) {
    if (keepVersions === undefined) return;
    const floor = newest - keepVersions + 1;
    if (floor <= 1) return;
    try {
      const oldest = await oldestVersion(sessionId, op);
      if (oldest === null) return;
      for (let version = oldest; version < Math.min(floor, oldest + MAX_PRUNED_PER_WRITE); version++) {
        await store.delete(versionKey(prefix, sessionId, version), op);
      }
    } catch (err) {
      if (StowageError.is(err, "ABORTED")) throw err;
      logger.warn(
        { sessionId, error: err instanceof Error ? err.message : String(err) },
        `hot state ${sessionId}: pruning versions before ${floor} failed; they are kept until the next write`,
      );
    }
  }

  function dispatcherFor(sessionId: string, handle: HotStateDispatcherOptions = {}): HotStateStoreDispatcher {
    assertSafeId(sessionId, "sessionId");
    const token: unknown = handle?.token;
    if (token !== undefined && (typeof token !== "string" || token.length === 0)) {
      throw new StowageError(
        "INVALID_INPUT",
        `dispatcher token must be the string claimDispatcher returned, got ${describeValue(token)}`,
      );
    }
    let base: HotStateVersion | null = null;

    const conflict = async (message: string, version: number, op: OperationOptions, cause?: unknown) =>
      new StowageError("CONFLICT", message, {
        ...(cause === undefined ? {} : { cause }),
        details: { sessionId, version, latest: await latestVersion(sessionId, op) },
      });

    async function write(input: unknown, op: HotStateWriteOptions = {}): Promise<HotStateVersion> {
      const { expectedVersion = base?.version ?? 0, ...operation } = op;
      if (expectedVersion !== 0) assertVersion(expectedVersion, "expectedVersion");
      // Authority and version first, a read each; fitting the state (validating, counting,
      // shedding) comes last: a caller that may not write, or writes after a stale version, is
      // refused before any of it.
      await assertDispatcher(sessionId, token, operation);
      // The previous version's hash links the chain. It is read back every time: a version this
      // dispatcher holds may have been deleted or written again since (a deleted session).
      let previousHash: string | null = null;
      if (expectedVersion > 0) {
        const previous = await get(sessionId, expectedVersion, operation);
        if (previous === null) {
          throw await conflict(
            `hot state ${sessionId} has no version ${expectedVersion} to write after`,
            expectedVersion + 1,
            operation,
          );
        }
        if (base?.version === expectedVersion && base.hash !== previous.hash) {
          throw await conflict(
            `hot state ${sessionId} version ${expectedVersion} was written again since this dispatcher read it`,
            expectedVersion + 1,
            operation,
          );
        }
        previousHash = previous.hash;
      }
      const version = expectedVersion + 1;
      assertVersion(version);
      if (await exists(sessionId, version, operation)) {
        throw await conflict(
          `hot state ${sessionId} version ${version} was written by another dispatcher; load the latest and decide again`,
          version,
          operation,
        );
      }
      // In slices: a server writing a maximal state goes on answering its other requests.
      const build = await buildHotStateInSlices(input, buildOptions, operation.signal);
      if (build.state.session_id !== sessionId) {
        throw new StowageError(
          "INVALID_INPUT",
          `hot state session_id must be ${describeValue(sessionId)} (the session of this dispatcher), got ${describeValue(build.state.session_id)}`,
        );
      }
      const bytes = encodeVersion({
        sessionId,
        version,
        previousHash,
        writtenAt: now().toISOString(),
        state: build.state,
        tokens: build.tokens,
        bytes: build.bytes,
        truncated: build.truncated,
        minimal: build.minimal,
        shed: build.shed,
      });
      try {
        await store.put(versionKey(prefix, sessionId, version), bytes, {
          ...operation,
          ifNoneMatch: "*",
          contentType: "application/json",
        });
      } catch (err) {
        if (!StowageError.is(err, "ALREADY_EXISTS")) throw err;
        throw await conflict(
          `hot state ${sessionId} version ${version} was written by another dispatcher; load the latest and decide again`,
          version,
          operation,
          err,
        );
      }
      seen.set(sessionId, Math.max(version, seen.get(sessionId) ?? 0));
      base = decodeVersion(bytes, sessionId, version);
      await prune(sessionId, version, operation);
      return base;
    }

    return Object.freeze({
      role: "dispatcher" as const,
      sessionId,
      current: () => base,
      async load(op: OperationOptions = {}) {
        base = await reader.latest(sessionId, op);
        return base;
      },
      write,
      update(change: (current: Readonly<HotState> | undefined) => unknown, op: OperationOptions = {}) {
        if (typeof change !== "function") {
          throw new StowageError("INVALID_INPUT", `update needs a function, got ${describeValue(change)}`);
        }
        // Based on this dispatcher's own version, whatever `op` carries.
        return write(change(base?.state), { ...op, expectedVersion: base?.version ?? 0 });
      },
    });
  }

  async function claimDispatcher(
    sessionId: string,
    { token, ...op }: HotStateClaimOptions = {},
  ): Promise<HotStateDispatcherClaim> {
    assertSafeId(sessionId, "sessionId");
    assertTokenShape(token);
    return { sessionId, token: await claims.claim(sessionId, token, op) };
  }

  async function releaseDispatcher(sessionId: string, { token, ...op }: HotStateClaimOptions = {}) {
    assertSafeId(sessionId, "sessionId");
    assertTokenShape(token);
    await claims.release(sessionId, token, op);
  }

  async function deleteSession(sessionId: string, { token, ...op }: HotStateClaimOptions = {}) {
    assertSafeId(sessionId, "sessionId");
    assertTokenShape(token);
    // A token is needed only where a claim stands: deleting an unclaimed session needs none.
    const holding = await claims.holding(sessionId, token, op);
    if (holding === "other") throw notDispatcher(sessionId, true, "deletes it");
    const keys: string[] = [];
    for await (const item of store.iterate({ prefix: sessionPrefix(sessionId), signal: op.signal })) {
      // The claim goes last, and only when this caller holds it: a claim made meanwhile stays.
      if (item.key !== claimKey(sessionId)) keys.push(item.key);
    }
    const io = op.signal ? { signal: op.signal } : {};
    // Newest first: a reader searching meanwhile never sees a gap below a version still there.
    for (const key of keys.reverse()) await store.delete(key, io);
    if (holding === "held") await store.delete(claimKey(sessionId), io);
    seen.delete(sessionId);
  }

  async function claimStatus(sessionId: string, { token, ...op }: HotStateClaimOptions = {}) {
    assertSafeId(sessionId, "sessionId");
    assertTokenShape(token);
    return claims.holding(sessionId, token, op);
  }

  return Object.freeze({
    dispatcherFor,
    claimDispatcher,
    releaseDispatcher,
    claimStatus,
    reader,
    deleteSession,
  });
}
