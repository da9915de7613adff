import {
  describeValue,
  type ListItem,
  mapConcurrent,
  type ObjectStore,
  type OperationOptions,
  type Principal,
  pushAll,
  StowageError,
  throwIfAborted,
} from "@stowage/core";
import type { QuotaLedger } from "./quota-ledger.js";
import { noteRevokedGrants } from "./revoked-grants.js";
import { sessionKeyParts, sessionPrefix, uploadKey } from "./upload-keys.js";
import { grantRecordExpiry } from "./upload-records.js";
import { LANDING_GRACE_MS } from "./upload-verification.js";

const DELETE_CONCURRENCY = 16;
const DAY_MS = 24 * 60 * 60 * 1000;
/** Everything the service writes lives under here (`sessions/<user|org>/<id>/<sessionId>/…`). */
const SESSIONS_ROOT = "sessions/";

/** What {@link UploadRetention.deleteSession} removed. */
export interface SessionDeletion {
  /**
   * Files removed: uploads and the session's other files. The service's own records of its upload
   * URLs go too, but are bookkeeping, counted here no more than in the quota.
   */
  deletedObjects: number;
  /** Their bytes. */
  deletedBytes: number;
}

/** Options of a retention sweep. */
export interface SweepUploadsOptions {
  /** Uploads last modified more than this many days before `now` go (decimals allowed). */
  olderThanDays: number;
  /** Report what would go, delete nothing; default false. */
  dryRun?: boolean;
  /** The sweep's clock; default the current time. */
  now?: Date;
  /** Called as the sweep goes (a progress bar): after each key listed and each session passed. */
  onProgress?: (progress: SweepUploadsProgress) => void;
  /**
   * Called with each session's uploads once they are deleted, before the sweep goes on to the
   * next session (never in a dry run): an audit of deletions records them as they go. When it
   * throws, the sweep stops there.
   */
  onSwept?: (uploads: readonly SweptUpload[]) => void | Promise<void>;
  signal?: AbortSignal;
}

/**
 * How far a sweep has gone: `scanned` keys listed so far (uploads and Stowage's own records; how
 * many there are is not known before the end), `swept` uploads deleted (or, in a dry run, found).
 */
export interface SweepUploadsProgress {
  scanned: number;
  swept: number;
}

/** One upload a sweep deleted (or, in a dry run, would delete). */
export interface SweptUpload {
  principal: Principal;
  sessionId: string;
  filename: string;
  key: string;
  size: number;
  lastModified: Date;
}

/** What a sweep did. */
export interface SweepUploadsResult {
  dryRun: boolean;
  /** Uploads last modified before this went. */
  cutoff: Date;
  /** In key order. */
  uploads: SweptUpload[];
  deletedBytes: number;
  /** Records of expired upload URLs removed with their uploads or left over (Stowage's own files). */
  deletedRecords: number;
}

/** Deletion of a whole session and the retention sweep; see {@link createUploadRetention}. */
export interface UploadRetention {
  deleteSession(
    principal: Principal,
    sessionId: string,
    options?: OperationOptions,
  ): Promise<SessionDeletion>;
  sweep(options: SweepUploadsOptions): Promise<SweepUploadsResult>;
}

/** One session's keys met by a sweep, gathered until the listing moves past the session. */
interface SessionBatch {
  scope: string;
  uploads: Set<string>;
  old: SweptUpload[];
  /** filename → its record keys, with the expiry each grant record's name carries. */
  records: Map<string, { key: string; expiresAt: number | undefined; lastModified: number }[]>;
}

function checkSweepOptions(options: SweepUploadsOptions): { cutoff: Date; now: number; dryRun: boolean } {
  const { olderThanDays, dryRun = false, now = new Date() } = options ?? ({} as SweepUploadsOptions);
  if (typeof olderThanDays !== "number" || !Number.isFinite(olderThanDays) || olderThanDays <= 0) {
    throw new StowageError(
      "INVALID_INPUT",
      `sweepUploads: olderThanDays must be a positive number, got ${describeValue(olderThanDays)}`,
    );
  }
  if (typeof dryRun !== "boolean") {
    throw new StowageError(
      "INVALID_INPUT",
      `sweepUploads: dryRun must be a boolean, got ${describeValue(dryRun)}`,
    );
  }
  if (options.onSwept !== undefined && typeof options.onSwept !== "function") {
    throw new StowageError(
      "INVALID_INPUT",
      `sweepUploads: onSwept must be a function, got ${describeValue(options.onSwept)}`,
    );
  }
  if (options.onProgress !== undefined && typeof options.onProgress !== "function") {
    throw new StowageError(
      "INVALID_INPUT",
      `sweepUploads: onProgress must be a function, got ${describeValue(options.onProgress)}`,
    );
  }
  if (!(now instanceof Date) || Number.isNaN(now.getTime())) {
    throw new StowageError("INVALID_INPUT", `sweepUploads: now must be a Date, got ${describeValue(now)}`);
  }
  return { cutoff: new Date(now.getTime() - olderThanDays * DAY_MS), now: now.getTime(), dryRun };
}

/** Where a listed key sits: its session and its place in it. */
type SessionKeyParts = NonNullable<ReturnType<typeof sessionKeyParts>>;

/** What retention's operations share. */
interface RetentionContext {
  store: ObjectStore;
  quota: QuotaLedger;
  /** The service's clock in ms: when a session's listing starts, for the ledger. */
  now: () => number;
}

const withSignal = (signal: AbortSignal | undefined) => (signal ? { signal } : {});

function removeAll({ store }: RetentionContext, keys: readonly string[], signal?: AbortSignal) {
  return mapConcurrent(keys, DELETE_CONCURRENCY, (key) => store.delete(key, withSignal(signal)), signal);
}

/**
 * The record keys of a batch that may go: those of expired URLs (a stamp has no URL) whose
 * upload is swept now, or whose upload is absent and which are older than the cutoff. A record
 * of a URL that can still write stays, so that its upload is checked when it lands.
 */
function doomedRecords(
  batch: SessionBatch,
  swept: ReadonlySet<string>,
  now: number,
  cutoff: number,
): string[] {
  const doomed: string[] = [];
  for (const [filename, records] of batch.records) {
    for (const record of records) {
      const expired = record.expiresAt === undefined || record.expiresAt + LANDING_GRACE_MS <= now;
      const absentAndOld = !batch.uploads.has(filename) && record.lastModified < cutoff;
      if (expired && (swept.has(filename) || absentAndOld)) doomed.push(record.key);
    }
  }
  return doomed;
}

/**
 * Deletes each listed upload that is still past retention when looked at again, just before its
 * delete (same size, last modified before the cutoff); returns those deleted. An agent that
 * uploaded the same filename again after the listing keeps its new file, which is younger than
 * the cutoff: a sweep runs for minutes over a large store, and only the moment between the look
 * and the delete is left for such a race (the ObjectStore contract has no conditional delete).
 * The time is compared with the cutoff, not with the listed one: a store may give a listing and
 * a HEAD different precisions (S3: milliseconds and seconds).
 */
async function deleteUnchanged(
  { store }: RetentionContext,
  listed: readonly SweptUpload[],
  cutoff: Date,
  signal?: AbortSignal,
): Promise<SweptUpload[]> {
  const deleted = await mapConcurrent(
    listed,
    DELETE_CONCURRENCY,
    async (upload) => {
      const current = await store.head(upload.key, withSignal(signal));
      const unchanged = current !== null && current.size === upload.size && current.lastModified < cutoff;
      if (!unchanged) return false;
      await store.delete(upload.key, withSignal(signal));
      return true;
    },
    signal,
  );
  return listed.filter((_, i) => deleted[i]);
}

/** Removes everything under the session's prefix, its upload URLs revoked first; the ledger follows. */
async function deleteSession(
  ctx: RetentionContext,
  principal: Principal,
  sessionId: string,
  signal?: AbortSignal,
): Promise<SessionDeletion> {
  const { store, quota } = ctx;
  const scope = sessionPrefix(principal, sessionId);
  throwIfAborted(signal, "delete session uploads");
  // First, the URLs: every reservation ends (its room is free at once) and the revocation is
  // counted, so a URL being handed out meanwhile is refused instead. Their records go with
  // the rest below, and a URL without a record writes nothing that counts.
  await quota.revoke(scope, withSignal(signal));
  const keys: string[] = [];
  let deletedObjects = 0;
  let deletedBytes = 0;
  const listedAt = new Date(ctx.now());
  // Upload key → the latest expiry of its URLs that can still write (on S3, after this deletion).
  const writable = new Map<string, number>();
  for await (const item of store.iterate({ prefix: scope, ...withSignal(signal) })) {
    keys.push(item.key);
    const place = sessionKeyParts(item.key)?.place;
    if (place?.folder === "records") {
      const expiresAt = grantRecordExpiry(place.name);
      if (expiresAt !== undefined && expiresAt + LANDING_GRACE_MS > listedAt.getTime()) {
        const key = uploadKey(principal, sessionId, place.filename);
        writable.set(key, Math.max(expiresAt, writable.get(key) ?? 0));
      }
      continue;
    }
    deletedObjects += 1;
    deletedBytes += item.size;
  }
  // Noted before the records go: what those URLs write later is found by the sweep, not left.
  await noteRevokedGrants(store, scope, writable, withSignal(signal));
  await removeAll(ctx, keys, signal);
  // The ledger forgets what was deleted, then drops what the listing did not find; an upload
  // that landed after the listing passed its place was not deleted and stays counted until
  // it is settled (refused: its URL was revoked).
  await mapConcurrent(
    keys,
    DELETE_CONCURRENCY,
    (key) => quota.forget(scope, key, withSignal(signal)),
    signal,
  );
  await quota.reconcile(scope, { objects: [], listedAt }, withSignal(signal));
  return { deletedObjects, deletedBytes };
}

/** Adds one listed key of the batch's session: an upload (old or not) or the record of a URL. */
function gather(batch: SessionBatch, parts: SessionKeyParts, item: ListItem, cutoff: Date): void {
  const { place } = parts;
  if (place.folder === "uploads") {
    batch.uploads.add(place.filename);
    if (item.lastModified < cutoff) {
      batch.old.push({
        principal: parts.owner,
        sessionId: parts.sessionId,
        filename: place.filename,
        key: item.key,
        size: item.size,
        lastModified: item.lastModified,
      });
    }
  } else if (place.folder === "records") {
    const list = batch.records.get(place.filename) ?? [];
    list.push({
      key: item.key,
      expiresAt: grantRecordExpiry(place.name),
      lastModified: item.lastModified.getTime(),
    });
    batch.records.set(place.filename, list);
  }
}

/** The retention sweep: one listing of every session, each session's old uploads gone when it is passed. */
async function sweep(ctx: RetentionContext, sweepOptions: SweepUploadsOptions): Promise<SweepUploadsResult> {
  const { cutoff, now, dryRun } = checkSweepOptions(sweepOptions);
  const signal = sweepOptions.signal;
  const uploads: SweptUpload[] = [];
  let deletedRecords = 0;
  let batch: SessionBatch | undefined;
  let scanned = 0;
  const progress = () => sweepOptions.onProgress?.({ scanned, swept: uploads.length });

  const flush = async (done: SessionBatch) => {
    const gone = dryRun ? done.old : await deleteUnchanged(ctx, done.old, cutoff, signal);
    const swept = new Set(gone.map((upload) => upload.filename));
    const records = doomedRecords(done, swept, now, cutoff.getTime());
    pushAll(uploads, gone);
    progress();
    deletedRecords += records.length;
    if (dryRun) return;
    for (const upload of gone) await ctx.quota.forget(done.scope, upload.key, withSignal(signal));
    await removeAll(ctx, records, signal);
    if (gone.length > 0) await sweepOptions.onSwept?.(gone);
  };

  for await (const item of ctx.store.iterate({ prefix: SESSIONS_ROOT, ...withSignal(signal) })) {
    scanned += 1;
    progress();
    const parts = sessionKeyParts(item.key);
    if (!parts) continue;
    if (batch?.scope !== parts.scope) {
      if (batch) await flush(batch);
      batch = { scope: parts.scope, uploads: new Set(), old: [], records: new Map() };
    }
    gather(batch, parts, item, cutoff);
  }
  if (batch) await flush(batch);
  const deletedBytes = uploads.reduce((sum, upload) => sum + upload.size, 0);
  return { dryRun, cutoff, uploads, deletedBytes, deletedRecords };
}

/**
 * A session's removal ("simple recursive deletion", as the design document's layout intends) and
 * the retention sweep of old uploads ("auto-delete artifacts after N days"); the ledger follows
 * every deletion.
 */
export function createUploadRetention(options: RetentionContext): UploadRetention {
  const ctx: RetentionContext = { store: options.store, quota: options.quota, now: options.now };
  return {
    deleteSession: (principal, sessionId, { signal } = {}) =>
      deleteSession(ctx, principal, sessionId, signal),
    sweep: (sweepOptions) => sweep(ctx, sweepOptions),
  };
}
