import { type Logger, type ObjectStore, type OperationOptions, StowageError } from "@stowage/core";
import type { BuildHotStateOptions } from "../hot-state/build-hot-state.js";
import {
  decodeVersion,
  type HotStateVersion,
  MAX_HOT_STATE_VERSION,
  versionKey,
} from "./hot-state-versions.js";
import { lastContiguous } from "./last-contiguous.js";

/** What the functions of one hot-state store share. */
export interface StoreContext {
  store: ObjectStore;
  prefix: string;
  now: () => Date;
  keepVersions: number | undefined;
  buildOptions: BuildHotStateOptions;
  logger: Logger;
  /**
   * The newest version seen per session: where the next search starts. Only a hint: versions can
   * be deleted (pruned, or the session deleted and written again), so a read that finds the
   * hinted version gone searches again from the start.
   */
  seen: Map<string, number>;
}

/** Reads of `latest` retried when the version found was deleted (pruned) before it was read. */
const MAX_READ_ATTEMPTS = 5;
/** A version's name inside its session's directory. */
const VERSION_NAME = /^(\d{12})\.json$/;

export const sessionPrefix = (ctx: StoreContext, sessionId: string) => `${ctx.prefix}${sessionId}/`;
export const claimKey = (ctx: StoreContext, sessionId: string) =>
  `${sessionPrefix(ctx, sessionId)}dispatcher.json`;

export async function versionExists(
  ctx: StoreContext,
  sessionId: string,
  version: number,
  op: OperationOptions,
) {
  return (await ctx.store.head(versionKey(ctx.prefix, sessionId, version), op)) !== null;
}

/** The oldest version kept (versions sort first in their directory), or null without any. */
export async function oldestVersion(ctx: StoreContext, sessionId: string, op: OperationOptions) {
  const prefix = sessionPrefix(ctx, sessionId);
  const { items } = await ctx.store.list({ prefix, limit: 1, signal: op.signal });
  const match = items[0] && VERSION_NAME.exec(items[0].key.slice(prefix.length));
  return match ? Number(match[1]) : null;
}

/** The newest version number (0: none), probed forward from the newest one seen. */
export async function latestVersion(
  ctx: StoreContext,
  sessionId: string,
  op: OperationOptions,
): Promise<number> {
  const probe = (version: number) => versionExists(ctx, sessionId, version, op);
  let latest = await lastContiguous(ctx.seen.get(sessionId) ?? 0, MAX_HOT_STATE_VERSION, probe);
  if (latest === 0) {
    // No version 1: none was written, or the oldest were pruned.
    const oldest = await oldestVersion(ctx, sessionId, op);
    if (oldest !== null) latest = await lastContiguous(oldest, MAX_HOT_STATE_VERSION, probe);
  }
  if (latest > 0) ctx.seen.set(sessionId, latest);
  else ctx.seen.delete(sessionId);
  return latest;
}

export async function readVersion(
  ctx: StoreContext,
  sessionId: string,
  version: number,
  op: OperationOptions,
) {
  const bytes = await ctx.store.get(versionKey(ctx.prefix, sessionId, version), op);
  return bytes === null ? null : decodeVersion(bytes, sessionId, version);
}

export async function readLatest(
  ctx: StoreContext,
  sessionId: string,
  op: OperationOptions,
): Promise<HotStateVersion | null> {
  for (let attempt = 0; attempt < MAX_READ_ATTEMPTS; attempt++) {
    const version = await latestVersion(ctx, sessionId, op);
    if (version === 0) return null;
    const stored = await readVersion(ctx, sessionId, version, op);
    if (stored !== null) return stored;
    ctx.seen.delete(sessionId); // deleted since the hint was taken: search from the start
  }
  throw new StowageError(
    "UNAVAILABLE",
    `hot state ${sessionId} kept changing while its latest version was read; try again`,
  );
}
