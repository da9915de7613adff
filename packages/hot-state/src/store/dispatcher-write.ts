import { assertSafeId, describeValue, type OperationOptions, StowageError } from "@stowage/core";
import { buildHotStateInSlices } from "../hot-state/build-hot-state.js";
import { type HotState, invalidInput, invalidValue } from "../schemas/schemas.js";
import { assertDispatcher, assertTokenShape } from "./dispatcher-claim.js";
import type { HotStateDispatcherOptions, HotStateWriteOptions } from "./hot-state-store.js";
import {
  assertVersion,
  decodeVersion,
  encodeVersion,
  type HotStateVersion,
  latestVersion,
  oldestVersion,
  readLatest,
  readVersion,
  type StoreContext,
  versionExists,
  versionKey,
} from "./hot-state-versions.js";

/** Old versions one write deletes at most when pruning (a longer backlog goes on at the next writes). */
const MAX_PRUNED_PER_WRITE = 64;

/** Deletes versions older than the newest `keepVersions`, oldest first, so those kept stay contiguous. */
async function prune(ctx: StoreContext, sessionId: string, newest: number, op: OperationOptions) {
  const floor = newest - (ctx.keepVersions ?? newest) + 1;
  if (floor <= 1) return;
  try {
    const oldest = await oldestVersion(ctx, sessionId, op);
    if (oldest === null) return;
    for (let version = oldest; version < Math.min(floor, oldest + MAX_PRUNED_PER_WRITE); version++) {
      await ctx.store.delete(versionKey(ctx, sessionId, version), op);
    }
  } catch (err) {
    if (StowageError.is(err, "ABORTED")) throw err;
    const error = err instanceof Error ? err.message : String(err);
    ctx.logger.warn({ sessionId, error }, `hot state ${sessionId}: pruning failed; the next write goes on`);
  }
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
  { expectedVersion = base?.version ?? 0, ...op }: HotStateWriteOptions,
): Promise<HotStateVersion> {
  if (expectedVersion !== 0) assertVersion(expectedVersion, "expectedVersion");
  await assertDispatcher(ctx, sessionId, token, op);
  const version = expectedVersion + 1;
  assertVersion(version);
  /** CONFLICT about writing `version`, with the latest version in `details`. */
  const conflict = async (why: string) => {
    const details = { sessionId, version, latest: await latestVersion(ctx, sessionId, op) };
    return new StowageError("CONFLICT", `hot state ${sessionId} ${why}`, { details });
  };
  // The previous version links the chain: read back every time (a version this dispatcher holds
  // may have been deleted or written again since, in a deleted session).
  const previous = expectedVersion === 0 ? null : await readVersion(ctx, sessionId, expectedVersion, op);
  if (expectedVersion !== 0 && previous === null) {
    throw await conflict(`has no version ${expectedVersion} to write after`);
  }
  if (base?.version === expectedVersion && base.hash !== previous?.hash) {
    throw await conflict(`version ${expectedVersion} was written again since this dispatcher read it`);
  }
  const lost = `version ${version} was written by another dispatcher; load the latest and decide again`;
  if (await versionExists(ctx, sessionId, version, op)) throw await conflict(lost);
  const build = await buildHotStateInSlices(input, ctx.buildOptions, op.signal);
  if (build.state.session_id !== sessionId) {
    const [expected, got] = [describeValue(sessionId), describeValue(build.state.session_id)];
    throw invalidInput(`hot state session_id must be ${expected} (this dispatcher's session), got ${got}`);
  }
  // Fitting may take a second: a claim made meanwhile must stop a write without its token, so the
  // claim is read again right before the put (what remains is the put's own few milliseconds).
  if (token === undefined) await assertDispatcher(ctx, sessionId, token, op);
  const { json: _json, ...fitted } = build;
  const link = {
    sessionId,
    version,
    previousHash: previous?.hash ?? null,
    writtenAt: ctx.now().toISOString(),
  };
  const bytes = encodeVersion({ ...fitted, ...link });
  try {
    const put = { ...op, ifNoneMatch: "*" as const, contentType: "application/json" };
    await ctx.store.put(versionKey(ctx, sessionId, version), bytes, put);
  } catch (err) {
    if (!StowageError.is(err, "ALREADY_EXISTS")) throw err;
    throw await conflict(lost);
  }
  ctx.seen.set(sessionId, Math.max(version, ctx.seen.get(sessionId) ?? 0));
  return decodeVersion(bytes, sessionId, version);
}

/** The writing handle of one session; `token` is its claim's, where it was claimed. */
export function dispatcherFor(ctx: StoreContext, sessionId: string, handle: HotStateDispatcherOptions = {}) {
  assertSafeId(sessionId, "sessionId");
  const token: unknown = handle?.token;
  assertTokenShape(token);
  let base: HotStateVersion | null = null;
  const write = async (input: unknown, op: HotStateWriteOptions = {}) => {
    base = await writeVersion(ctx, sessionId, token, base, input, op);
    await prune(ctx, sessionId, base.version, { signal: op.signal });
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
      if (typeof change !== "function") throw invalidValue("update needs a function", change);
      // Based on this dispatcher's own version, whatever `op` carries.
      return write(change(base?.state), { ...op, expectedVersion: base?.version ?? 0 });
    },
  });
}
