import { assertSafeId, describeValue, type OperationOptions, StowageError } from "@stowage/core";
import { buildHotStateInSlices } from "../hot-state/build-hot-state.js";
import type { HotState } from "../schemas/hot-state-schema.js";
import { assertDispatcher, assertTokenShape } from "./dispatcher-claim.js";
import type {
  HotStateDispatcherOptions,
  HotStateStoreDispatcher,
  HotStateWriteOptions,
} from "./hot-state-store.js";
import {
  assertVersion,
  decodeVersion,
  encodeVersion,
  type HotStateVersion,
  versionKey,
} from "./hot-state-versions.js";
import {
  latestVersion,
  oldestVersion,
  readLatest,
  readVersion,
  type StoreContext,
  versionExists,
} from "./version-reads.js";

/** Old versions one write deletes at most when pruning (a longer backlog goes on at the next writes). */
const MAX_PRUNED_PER_WRITE = 64;

async function conflict(
  ctx: StoreContext,
  sessionId: string,
  message: string,
  version: number,
  op: OperationOptions,
  cause?: unknown,
) {
  const latest = await latestVersion(ctx, sessionId, op);
  return new StowageError("CONFLICT", message, {
    ...(cause === undefined ? {} : { cause }),
    details: { sessionId, version, latest },
  });
}

/** Deletes versions older than the newest `keepVersions`, oldest first, so those kept stay contiguous. */
async function prune(ctx: StoreContext, sessionId: string, newest: number, op: OperationOptions) {
  if (ctx.keepVersions === undefined) return;
  const floor = newest - ctx.keepVersions + 1;
  if (floor <= 1) return;
  try {
    const oldest = await oldestVersion(ctx, sessionId, op);
    if (oldest === null) return;
    for (let version = oldest; version < Math.min(floor, oldest + MAX_PRUNED_PER_WRITE); version++) {
      await ctx.store.delete(versionKey(ctx.prefix, sessionId, version), op);
    }
  } catch (err) {
    if (StowageError.is(err, "ABORTED")) throw err;
    ctx.logger.warn(
      { sessionId, error: err instanceof Error ? err.message : String(err) },
      `hot state ${sessionId}: pruning versions before ${floor} failed; they are kept until the next write`,
    );
  }
}

/**
 * The previous version's hash, which links the chain: version `expected` read back every time (a
 * version this dispatcher holds may have been deleted or written again since, in a deleted
 * session). CONFLICT when it is gone or is not the one the dispatcher based its write on.
 */
async function previousHash(
  ctx: StoreContext,
  sessionId: string,
  expected: number,
  base: HotStateVersion | null,
  op: OperationOptions,
): Promise<string | null> {
  if (expected === 0) return null;
  const previous = await readVersion(ctx, sessionId, expected, op);
  if (previous === null) {
    throw await conflict(
      ctx,
      sessionId,
      `hot state ${sessionId} has no version ${expected} to write after`,
      expected + 1,
      op,
    );
  }
  if (base?.version === expected && base.hash !== previous.hash) {
    const message = `hot state ${sessionId} version ${expected} was written again since this dispatcher read it`;
    throw await conflict(ctx, sessionId, message, expected + 1, op);
  }
  return previous.hash;
}

/**
 * Writes version `expected + 1`. Authority and version first, a read each; fitting the state
 * (validating, counting, shedding) comes last, in slices: a caller that may not write, or writes
 * after a stale version, is refused before any of it.
 */
async function writeVersion(
  ctx: StoreContext,
  sessionId: string,
  token: string | undefined,
  base: HotStateVersion | null,
  input: unknown,
  options: HotStateWriteOptions,
): Promise<HotStateVersion> {
  const { expectedVersion = base?.version ?? 0, ...op } = options;
  if (expectedVersion !== 0) assertVersion(expectedVersion, "expectedVersion");
  await assertDispatcher(ctx, sessionId, token, op);
  const hash = await previousHash(ctx, sessionId, expectedVersion, base, op);
  const version = expectedVersion + 1;
  assertVersion(version);
  const lost = `hot state ${sessionId} version ${version} was written by another dispatcher; load the latest and decide again`;
  if (await versionExists(ctx, sessionId, version, op))
    throw await conflict(ctx, sessionId, lost, version, op);
  const build = await buildHotStateInSlices(input, ctx.buildOptions, op.signal);
  if (build.state.session_id !== sessionId) {
    throw new StowageError(
      "INVALID_INPUT",
      `hot state session_id must be ${describeValue(sessionId)} (the session of this dispatcher), got ${describeValue(build.state.session_id)}`,
    );
  }
  const { state, tokens, bytes: size, truncated, minimal, shed } = build;
  const writtenAt = ctx.now().toISOString();
  const bytes = encodeVersion({
    sessionId,
    version,
    previousHash: hash,
    writtenAt,
    state,
    tokens,
    bytes: size,
    truncated,
    minimal,
    shed,
  });
  try {
    await ctx.store.put(versionKey(ctx.prefix, sessionId, version), bytes, {
      ...op,
      ifNoneMatch: "*",
      contentType: "application/json",
    });
  } catch (err) {
    if (!StowageError.is(err, "ALREADY_EXISTS")) throw err;
    throw await conflict(ctx, sessionId, lost, version, op, err);
  }
  ctx.seen.set(sessionId, Math.max(version, ctx.seen.get(sessionId) ?? 0));
  return decodeVersion(bytes, sessionId, version);
}

/** The writing handle of one session; `token` is its claim's, where it was claimed. */
export function dispatcherFor(
  ctx: StoreContext,
  sessionId: string,
  handle: HotStateDispatcherOptions = {},
): HotStateStoreDispatcher {
  assertSafeId(sessionId, "sessionId");
  const token: unknown = handle?.token;
  assertTokenShape(token);
  let base: HotStateVersion | null = null;
  const write = async (input: unknown, op: HotStateWriteOptions = {}) => {
    base = await writeVersion(ctx, sessionId, token, base, input, op);
    await prune(ctx, sessionId, base.version, op.signal ? { signal: op.signal } : {});
    return base;
  };
  return Object.freeze({
    role: "dispatcher" as const,
    sessionId,
    current: () => base,
    async load(op: OperationOptions = {}) {
      base = await readLatest(ctx, sessionId, op);
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
