import {
  type Logger,
  mapConcurrent,
  type ObjectInfo,
  type ObjectStore,
  type OperationOptions,
  parseContentType,
  StowageError,
} from "@stowage/core";
import type { QuotaLedger } from "./quota-ledger.js";
import { sha256OfStream } from "./sha256-stream.js";
import {
  decodeGrantRecord,
  decodeVerifiedStamp,
  encodeRecord,
  type GrantRecord,
  grantRecordExpiry,
  grantRecordName,
  SERVED_COPY_PREFIX,
  servedCopyName,
  VERIFIED_STAMP_NAME,
  type VerifiedStamp,
} from "./upload-records.js";

/**
 * How long after its URL expired an upload may still land: S3 checks expiry when an upload
 * starts, so a slow upload begun just before expiry arrives later. The ledger's reservations
 * outlive their URLs by the same default.
 */
export const LANDING_GRACE_MS = 10 * 60 * 1000;
// Last-Modified has whole seconds and server clocks drift: a stamp is written only once the
// object's second is this far in the past, so that no later write can share its lastModified.
const STAMP_DELAY_MS = 3000;
const RECORD_IO_CONCURRENCY = 8;

/** One upload as the verifier sees it. */
export interface UploadLocation {
  /** The session prefix: the ledger's scope. */
  scope: string;
  key: string;
  /** `upload-records/<filename>/` of the session. */
  recordsPrefix: string;
}

/** What {@link UploadVerifier.settle} found. */
export type UploadVerdict =
  | {
      state: "verified";
      info: ObjectInfo;
      /** What the URLs bound, when some can still write the object (records kept, not all expired). */
      writable?: readonly GrantRecord[];
    }
  | { state: "absent" }
  | { state: "refused"; reason: "size" | "content type" | "sha256" }
  /** Written through a URL revoked when the session's uploads were deleted: deleted now. */
  | { state: "revoked" };

/** What a signed upload URL binds, as the store that serves it hands it back at the PUT. */
export interface DirectUploadGrant {
  key: string;
  contentType: string;
  contentLength: number;
  /** Hex SHA-256 the URL binds, if any. */
  sha256?: string;
  expiresAt: Date;
}

/** Options of {@link UploadVerifier.settle}. */
export interface SettleOptions extends OperationOptions {
  /**
   * The session's URLs were revoked at least once (its uploads deleted): an object counts only
   * where a record or the stamp of one verified since vouches for it. Without a revocation, an
   * object with no records is what a checked upload left (records go once every URL expired).
   */
  revoked: boolean;
}

/** Options of {@link createUploadVerifier}. */
export interface UploadVerifierOptions {
  store: ObjectStore;
  quota: QuotaLedger;
  now: () => number;
  logger: Logger;
}

/** Records what each signed URL bound and settles uploads against those records. */
export interface UploadVerifier {
  /**
   * True where the store does not itself refuse bytes that miss the bound SHA-256 (Ceph RGW 16):
   * only there is a landed upload hashed, and a download served from a verified copy while an
   * upload URL can still write. Records are kept on every store: they are also what says a URL
   * was not revoked.
   */
  readonly checksBytes: boolean;
  /** Stores the record of one URL; returns a function that removes it again. */
  record(
    location: UploadLocation,
    grant: GrantRecord,
    options: OperationOptions,
  ): Promise<() => Promise<void>>;
  /**
   * Decides what the object at `location.key` is: verified (then committed to the ledger),
   * absent, or refused (then deleted and forgotten). `recordKeys` are the keys under the records
   * prefix when the caller listed them already.
   */
  settle(
    location: UploadLocation,
    recordKeys: readonly string[] | undefined,
    options: SettleOptions,
  ): Promise<UploadVerdict>;
  /**
   * Whether a record of the upload's location holds exactly what `grant` binds: a URL the service
   * signed and has not revoked (revoking deletes the records). For a store that asks before it
   * stores an upload (the file system's `checkUpload`).
   */
  holdsGrant(location: UploadLocation, grant: DirectUploadGrant, options: OperationOptions): Promise<boolean>;
  /**
   * The key a download of the object may be signed for, once `settle` verified it: the object's
   * own key when no URL can write it any more; while one can, a copy of the verified bytes beside
   * the records (made now, checked against what the URLs bound, or kept from an earlier download
   * of the same object), which no URL can write. So a download URL never serves bytes written
   * through an upload URL after it was signed.
   */
  servable(
    location: UploadLocation,
    verdict: Extract<UploadVerdict, { state: "verified" }>,
    options: OperationOptions,
  ): Promise<string>;
}

const essence = (type: string | undefined) => parseContentType(type)?.essence;
const withSignal = (signal: AbortSignal | undefined) => (signal ? { signal } : {});

/** What the verifier's steps share. */
interface VerifierContext extends UploadVerifierOptions {
  checksBytes: boolean;
}

const removeAll = (ctx: VerifierContext, keys: readonly string[], signal?: AbortSignal) =>
  mapConcurrent(keys, RECORD_IO_CONCURRENCY, (key) => ctx.store.delete(key, withSignal(signal)), signal);

async function listKeys(ctx: VerifierContext, prefix: string, signal?: AbortSignal): Promise<string[]> {
  const keys: string[] = [];
  for await (const item of ctx.store.iterate({ prefix, ...withSignal(signal) })) keys.push(item.key);
  return keys;
}

/** Which bound facts the object at `key` misses; undefined when it matches one of the grants. */
async function mismatch(
  ctx: VerifierContext,
  key: string,
  info: ObjectInfo,
  grants: readonly GrantRecord[],
  signal?: AbortSignal,
): Promise<"size" | "content type" | "sha256" | "gone" | undefined> {
  const sized = grants.filter((grant) => grant.size === info.size);
  if (sized.length === 0) return "size";
  const typed =
    info.contentType === undefined
      ? sized
      : sized.filter((grant) => essence(grant.contentType) === essence(info.contentType));
  if (typed.length === 0) return "content type";
  // Where the store checked the bound SHA-256 itself, what landed is what one of the URLs bound.
  if (!ctx.checksBytes || typed.some((grant) => grant.sha256 === null)) return undefined;
  const stream = await ctx.store.stream(key, withSignal(signal));
  if (!stream) return "gone";
  const actual = await sha256OfStream(stream, signal);
  return typed.some((grant) => grant.sha256 === actual) ? undefined : "sha256";
}

const stampKeyOf = (location: UploadLocation) => `${location.recordsPrefix}${VERIFIED_STAMP_NAME}`;

/** Writes the stamp of a verified object, so that later settles trust it without its records. */
async function writeStamp(
  ctx: VerifierContext,
  location: UploadLocation,
  info: ObjectInfo,
  io: OperationOptions,
) {
  const fresh: VerifiedStamp = { size: info.size, lastModified: info.lastModified.getTime() };
  await ctx.store.put(stampKeyOf(location), encodeRecord(fresh), { contentType: "application/json", ...io });
}

async function readStamp(ctx: VerifierContext, location: UploadLocation, io: OperationOptions) {
  return decodeVerifiedStamp(await ctx.store.get(stampKeyOf(location), io));
}

const holds = (stamp: VerifiedStamp | undefined, info: ObjectInfo) =>
  stamp?.size === info.size && stamp.lastModified === info.lastModified.getTime();

/** The records under an upload's records prefix, sorted by what they are. */
function sortRecords(location: UploadLocation, keys: readonly string[]) {
  const stampKey = stampKeyOf(location);
  const copyKeys = keys.filter((key) => key.startsWith(`${location.recordsPrefix}${SERVED_COPY_PREFIX}`));
  const grantKeys = keys.filter((key) => key !== stampKey && !copyKeys.includes(key));
  return { stampKey, copyKeys, grantKeys, stamped: keys.includes(stampKey) };
}

/**
 * An object without a grant record. Without a revocation it is what a checked upload left (or the
 * store itself): it counts. After one, only the stamp of an upload verified since vouches for it;
 * anything else landed through a revoked URL, and is deleted.
 */
async function settleUngranted(
  ctx: VerifierContext,
  location: UploadLocation,
  info: ObjectInfo | null,
  stamped: boolean,
  { signal, revoked }: SettleOptions,
): Promise<UploadVerdict> {
  const io = withSignal(signal);
  const stampKey = stampKeyOf(location);
  const stamp = revoked && stamped && info ? await readStamp(ctx, location, io) : undefined;
  if (info && (!revoked || holds(stamp, info))) {
    if (stamped && !revoked) await ctx.store.delete(stampKey, io);
    await ctx.quota.commit({ scope: location.scope, key: location.key, size: info.size }, io);
    return { state: "verified", info };
  }
  if (stamped) await ctx.store.delete(stampKey, io);
  if (!info) return { state: "absent" };
  await ctx.store.delete(location.key, io);
  await ctx.quota.forget(location.scope, location.key, io);
  ctx.logger.warn(
    { key: location.key },
    "upload refused: it came through a URL revoked when its session was deleted",
  );
  return { state: "revoked" };
}

/** Settles an object against the records of the URLs signed for it; see {@link UploadVerifier.settle}. */
async function settleUpload(
  ctx: VerifierContext,
  location: UploadLocation,
  recordKeys: readonly string[] | undefined,
  options: SettleOptions,
): Promise<UploadVerdict> {
  const { signal } = options;
  const io = withSignal(signal);
  const keys = recordKeys ?? (await listKeys(ctx, location.recordsPrefix, signal));
  const { stampKey, copyKeys, grantKeys, stamped } = sortRecords(location, keys);
  const info = await ctx.store.head(location.key, io);
  if (grantKeys.length === 0) {
    // Nothing outstanding: copies of what was verified are served no more.
    await removeAll(ctx, copyKeys, signal);
    return settleUngranted(ctx, location, info, stamped, options);
  }
  const time = ctx.now();
  const read = await mapConcurrent(
    grantKeys,
    RECORD_IO_CONCURRENCY,
    async (key) => ({ key, grant: decodeGrantRecord(await ctx.store.get(key, io)) }),
    signal,
  );
  const live = read.filter(({ grant }) => grant && grant.expiresAt + LANDING_GRACE_MS > time);
  const expired = read.filter((entry) => !live.includes(entry)).map(({ key }) => key);
  const grants = read.flatMap(({ grant }) => (grant ? [grant] : []));
  // Once no URL can write, what is left beside the records (stamp, verified copies) goes too;
  // after a revocation the stamp stays: it is what vouches for the upload from then on.
  const leftovers = [...(stamped ? [stampKey] : []), ...copyKeys];
  if (!info) {
    await removeAll(ctx, live.length === 0 ? [...expired, ...leftovers] : expired, signal);
    return { state: "absent" };
  }
  const stampHolds = holds(stamped ? await readStamp(ctx, location, io) : undefined, info);
  const missed = stampHolds ? undefined : await mismatch(ctx, location.key, info, grants, signal);
  // Deleted while being checked (a concurrent deletion): nothing is left to count.
  if (missed === "gone") return { state: "absent" };
  if (missed !== undefined) {
    await ctx.store.delete(location.key, io);
    await ctx.quota.forget(location.scope, location.key, io);
    // Records of URLs that can still write stay: a later upload through them is checked too.
    // Copies of what was verified before stay as well: download URLs signed for them serve
    // those bytes until they expire.
    await removeAll(ctx, stamped ? [...expired, stampKey] : expired, signal);
    ctx.logger.warn(
      { key: location.key, mismatch: missed },
      "upload refused: the stored object does not match what its URL bound",
    );
    return { state: "refused", reason: missed };
  }
  await ctx.quota.commit({ scope: location.scope, key: location.key, size: info.size }, io);
  if (live.length === 0) {
    await removeAll(ctx, [...expired, ...(options.revoked ? copyKeys : leftovers)], signal);
    if (options.revoked && !stampHolds) await writeStamp(ctx, location, info, io);
    return { state: "verified", info };
  }
  await removeAll(ctx, expired, signal);
  if (!stampHolds && time - info.lastModified.getTime() >= STAMP_DELAY_MS) {
    await writeStamp(ctx, location, info, io);
  }
  return { state: "verified", info, ...(ctx.checksBytes ? { writable: grants } : {}) };
}

/** Whether a record of the location holds exactly what `grant` binds; see {@link UploadVerifier.holdsGrant}. */
async function holdsGrant(
  ctx: VerifierContext,
  location: UploadLocation,
  grant: DirectUploadGrant,
  signal?: AbortSignal,
): Promise<boolean> {
  const expiresAt = grant.expiresAt.getTime();
  // A record's name carries its URL's expiry: only those of this URL's are read.
  const named = (await listKeys(ctx, location.recordsPrefix, signal)).filter(
    (key) => grantRecordExpiry(key.slice(location.recordsPrefix.length)) === expiresAt,
  );
  for (const key of named) {
    const record = decodeGrantRecord(await ctx.store.get(key, withSignal(signal)));
    if (
      record?.expiresAt === expiresAt &&
      record.size === grant.contentLength &&
      record.contentType === grant.contentType &&
      record.sha256 === (grant.sha256 ?? null)
    ) {
      return true;
    }
  }
  return false;
}

/** The key a download may be signed for; see {@link UploadVerifier.servable}. */
async function servableKey(
  ctx: VerifierContext,
  location: UploadLocation,
  verdict: Extract<UploadVerdict, { state: "verified" }>,
  signal?: AbortSignal,
): Promise<string> {
  if (!verdict.writable) return location.key;
  const io = withSignal(signal);
  const copyKey = `${location.recordsPrefix}${servedCopyName(verdict.info)}`;
  // Made and checked by an earlier download of this same verified object.
  if ((await ctx.store.head(copyKey, io))?.size === verdict.info.size) return copyKey;
  const source = await ctx.store.stream(location.key, io);
  if (!source) throw gone(location);
  await ctx.store.put(copyKey, source, {
    ...(verdict.info.contentType === undefined ? {} : { contentType: verdict.info.contentType }),
    ...io,
  });
  // The copy is checked, not the object: an upload through a URL may have replaced the object
  // since it was verified, and the copy is what downloads will serve.
  const copied = await ctx.store.head(copyKey, io);
  const missed = copied ? await mismatch(ctx, copyKey, copied, verdict.writable, signal) : "gone";
  if (missed !== undefined) {
    await ctx.store.delete(copyKey, io);
    throw new StowageError(
      "CONFLICT",
      "the upload changed while its download was being prepared (an upload URL can still write it); ask again",
      { reason: "UPLOAD_CHANGED" },
    );
  }
  return copyKey;
}

/**
 * The verifier of uploads. Every signed URL has a record; with records, an object counts only if
 * it matches one of them: the bound size, content type and, where the URL bound one and the store
 * did not check it, SHA-256 (the object is streamed through the hash, never buffered). A matching
 * object gets a stamp (size and lastModified) so that later listings need not hash it again while
 * its URLs can still write; once every URL has expired past the landing grace, records and stamp
 * are removed and the object is final. Deleting a session's uploads deletes its records, which
 * revokes its URLs: from then on (`revoked`) a final object keeps its stamp, and an object that
 * neither a record nor a stamp vouches for came through a revoked URL and is deleted.
 */
export function createUploadVerifier(options: UploadVerifierOptions): UploadVerifier {
  const ctx: VerifierContext = {
    ...options,
    checksBytes: !options.store.capabilities.directUploadVerifiesSha256,
  };
  return {
    checksBytes: ctx.checksBytes,

    async record(location, grant, { signal }) {
      const key = `${location.recordsPrefix}${grantRecordName(grant.expiresAt)}`;
      // A new name each time: create-only, which is one conditional PUT on S3 (no HEAD first).
      await ctx.store.put(key, encodeRecord(grant), {
        contentType: "application/json",
        ifNoneMatch: "*",
        ...withSignal(signal),
      });
      return () => ctx.store.delete(key);
    },

    holdsGrant: (location, grant, { signal }) => holdsGrant(ctx, location, grant, signal),
    settle: (location, recordKeys, settleOptions) => settleUpload(ctx, location, recordKeys, settleOptions),
    servable: (location, verdict, { signal }) => servableKey(ctx, location, verdict, signal),
  };
}

function gone(location: UploadLocation): StowageError {
  return new StowageError("CONFLICT", "the upload was deleted while its download was being prepared", {
    reason: "UPLOAD_CHANGED",
    details: { key: location.key },
  });
}
