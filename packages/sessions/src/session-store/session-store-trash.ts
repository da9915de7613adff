import { randomBytes } from "node:crypto";
import {
  assertSafeId,
  describeValue,
  isSafeId,
  mapConcurrent,
  pushAll,
  StowageError,
  throwIfAborted,
} from "@stowage/core";
import { listParts, READ_CONCURRENCY } from "./read-parts.js";
import { forget, type SessionStoreContext, serialize, sessionDirectory } from "./session-store-context.js";
import { assertSessionStoreProjectKey, type StoredSessionKey } from "./session-store-key.js";
import type { StoreOperationOptions, TrashedTranscript } from "./types.js";

// A delete with trash days moves the transcript's objects, as they are, to the project's trash:
// `<prefix>/~trash/<projectKey>/<trashId>/<n>`, with a manifest `<trashId>.json` beside them that
// says where each came from. `~` is in no project key, so the trash is no project, and a scan of
// `<prefix>/` for blob refs (garbage collection's root) still reads the moved parts. Every read
// lists the transcript's own directory only: what moved is invisible to it.

const TRASH_SEGMENT = "~trash";
const DAY_MS = 24 * 60 * 60 * 1000;
const MANIFEST_SUFFIX = ".json";
/** Beside a manifest while a restore moves its objects back: a restore cut short is finished, never purged. */
const RESTORING_SUFFIX = ".restoring";
const DEFAULT_PURGE_LIMIT = 1000;

/** What a manifest holds: the transcript's key, times, and each moved object's key below the session's directory. */
interface TrashManifest {
  projectKey: string;
  sessionId: string;
  subpath: string;
  trashedAt: string;
  purgeAfter: string;
  objects: { from: string; size: number }[];
}

/** An object of the transcript, as a delete lists it. */
export interface TranscriptObject {
  key: string;
  size: number;
}

const projectTrash = (context: SessionStoreContext, projectKey: string) =>
  `${context.prefix}/${TRASH_SEGMENT}/${projectKey}/`;
const manifestKey = (context: SessionStoreContext, projectKey: string, trashId: string) =>
  `${projectTrash(context, projectKey)}${trashId}${MANIFEST_SUFFIX}`;
const restoringKey = (context: SessionStoreContext, projectKey: string, trashId: string) =>
  `${projectTrash(context, projectKey)}${trashId}${RESTORING_SUFFIX}`;
const movedKey = (context: SessionStoreContext, projectKey: string, trashId: string, index: number) =>
  `${projectTrash(context, projectKey)}${trashId}/${index}`;

/** Sortable by the time of the delete, then random: two deletes never share one. */
const newTrashId = (at: number) => `${at.toString(36).padStart(9, "0")}-${randomBytes(6).toString("hex")}`;

/**
 * The time of this process's last delete into a trash: each next one is at least a millisecond
 * later, so two deletes in one millisecond (a delete cut short and the one that finishes it) list
 * oldest first, as a restore of both needs (the newer back first), not in their random ids' order.
 */
let lastTrashedAt = 0;
const nextTrashTime = () => {
  lastTrashedAt = Math.max(Date.now(), lastTrashedAt + 1);
  return lastTrashedAt;
};

const notInTrash = (projectKey: string, trashId: string) =>
  new StowageError(
    "NOT_FOUND",
    `nothing in the trash of project ${projectKey} is ${describeValue(trashId)}`,
    {
      reason: "NOT_IN_TRASH",
    },
  );

function assertTrashId(trashId: unknown): asserts trashId is string {
  assertSafeId(trashId, "trashId");
}

const asTrashed = (trashId: string, manifest: TrashManifest): TrashedTranscript => ({
  trashId,
  projectKey: manifest.projectKey,
  sessionId: manifest.sessionId,
  ...(manifest.subpath === "" ? {} : { subpath: manifest.subpath }),
  trashedAt: manifest.trashedAt,
  purgeAfter: manifest.purgeAfter,
  bytes: manifest.objects.reduce((sum, object) => sum + object.size, 0),
});

/** A manifest read back, or undefined when the object is not one (damaged: listed nowhere, never acted on). */
function parseManifest(bytes: Uint8Array, projectKey: string): TrashManifest | undefined {
  try {
    const value = JSON.parse(new TextDecoder().decode(bytes)) as TrashManifest;
    const sound =
      value.projectKey === projectKey &&
      isSafeId(value.sessionId) &&
      typeof value.subpath === "string" &&
      !Number.isNaN(Date.parse(value.trashedAt)) &&
      !Number.isNaN(Date.parse(value.purgeAfter)) &&
      Array.isArray(value.objects) &&
      value.objects.every(
        (object) =>
          typeof object?.from === "string" &&
          object.from.length > 0 &&
          !object.from.split("/").includes("..") &&
          Number.isSafeInteger(object.size),
      );
    return sound ? value : undefined;
  } catch {
    return undefined;
  }
}

async function readManifest(
  context: SessionStoreContext,
  projectKey: string,
  trashId: string,
  signal: AbortSignal | undefined,
): Promise<TrashManifest> {
  const bytes = await context.store.get(manifestKey(context, projectKey, trashId), { signal });
  if (!bytes) throw notInTrash(projectKey, trashId);
  const manifest = parseManifest(bytes, projectKey);
  if (!manifest) {
    throw new StowageError("INTEGRITY", `the trash record ${trashId} of project ${projectKey} is damaged`, {
      reason: "TRASH_RECORD_INVALID",
    });
  }
  return manifest;
}

/**
 * Moves a transcript's objects to the trash: the manifest first (create-only), then each object.
 * An object gone meanwhile (another process's delete, a compaction) is skipped; a delete cut short
 * leaves the rest where it was, and deleting again moves it under another trash id.
 */
export async function trashTranscript(
  context: SessionStoreContext,
  stored: StoredSessionKey,
  objects: readonly TranscriptObject[],
  days: number,
  signal: AbortSignal | undefined,
): Promise<void> {
  const { store } = context;
  const base = sessionDirectory(context, stored.projectKey, stored.sessionId);
  const now = nextTrashTime();
  const trashId = newTrashId(now);
  const manifest: TrashManifest = {
    projectKey: stored.projectKey,
    sessionId: stored.sessionId,
    subpath: stored.subpath,
    trashedAt: new Date(now).toISOString(),
    purgeAfter: new Date(now + Math.round(days * DAY_MS)).toISOString(),
    objects: objects.map((object) => ({ from: object.key.slice(base.length), size: object.size })),
  };
  await store.put(
    manifestKey(context, stored.projectKey, trashId),
    new TextEncoder().encode(JSON.stringify(manifest)),
    { ifNoneMatch: "*", contentType: "application/json", signal },
  );
  await mapConcurrent(
    objects,
    READ_CONCURRENCY,
    async (object, index) => {
      try {
        await store.move(object.key, movedKey(context, stored.projectKey, trashId, index), {
          ifNoneMatch: "*",
          signal,
        });
      } catch (err) {
        if (!StowageError.is(err, "NOT_FOUND")) throw err;
      }
    },
    signal,
  );
}

/** The keys a transcript's key holds now: a main transcript's whole directory, a subpath's parts. */
async function liveKeys(
  context: SessionStoreContext,
  manifest: TrashManifest,
  signal: AbortSignal | undefined,
): Promise<string[]> {
  const base = sessionDirectory(context, manifest.projectKey, manifest.sessionId);
  if (manifest.subpath === "") {
    const keys: string[] = [];
    for await (const page of context.store.keys({ prefix: base, signal }).byPage()) pushAll(keys, page);
    return keys;
  }
  return (await listParts(context.store, `${base}${manifest.subpath}/`, signal)).map((part) => part.key);
}

/** Puts a trashed transcript back; see `SessionStoreTrash.restoreFromTrash`. */
export async function restoreTranscript(
  context: SessionStoreContext,
  projectKey: unknown,
  trashId: unknown,
  { signal }: StoreOperationOptions = {},
): Promise<TrashedTranscript> {
  assertSessionStoreProjectKey(projectKey);
  assertTrashId(trashId);
  const manifest = await readManifest(context, projectKey, trashId, signal);
  const base = sessionDirectory(context, projectKey, manifest.sessionId);
  const directory = manifest.subpath === "" ? base : `${base}${manifest.subpath}/`;
  return serialize(context, directory, async () => {
    const { store } = context;
    const moved = manifest.objects.map((object, index) => ({
      to: `${base}${object.from}`,
      from: movedKey(context, projectKey, trashId, index),
    }));
    const ours = new Map(moved.map((object) => [object.to, object.from]));
    // What the key holds now may only be what an earlier restore of this one put back.
    for (const key of await liveKeys(context, manifest, signal)) {
      const trashed = ours.get(key);
      if (trashed === undefined || (await store.head(trashed, { signal })) !== null) {
        throw new StowageError(
          "CONFLICT",
          `session ${manifest.sessionId} of project ${projectKey} holds a transcript again (appended since it was deleted); restore refused, both kept`,
          { reason: "TRANSCRIPT_REUSED" },
        );
      }
    }
    // From here the transcript is half back if this is cut short: the mark says so, and a purge
    // then refuses (a sweep finishes the restore) instead of deleting the half still here.
    await store.put(restoringKey(context, projectKey, trashId), new Uint8Array(0), { signal });
    await mapConcurrent(
      moved,
      READ_CONCURRENCY,
      async (object) => {
        try {
          await store.move(object.from, object.to, { ifNoneMatch: "*", signal });
        } catch (err) {
          // Put back by an earlier restore cut short: nothing left to move.
          if (!StowageError.is(err, "NOT_FOUND")) throw err;
        }
      },
      signal,
    );
    forget(context, base);
    await store.delete(manifestKey(context, projectKey, trashId), { signal });
    await store.delete(restoringKey(context, projectKey, trashId), { signal });
    return asTrashed(trashId, manifest);
  });
}

/** Whether a restore of the entry began and did not finish (its objects are partly back). */
const restoreUnfinished = async (
  context: SessionStoreContext,
  projectKey: string,
  trashId: string,
  signal: AbortSignal | undefined,
) => (await context.store.head(restoringKey(context, projectKey, trashId), { signal })) !== null;

async function purge(
  context: SessionStoreContext,
  projectKey: string,
  trashId: string,
  manifest: TrashManifest,
  signal: AbortSignal | undefined,
): Promise<TrashedTranscript> {
  if (await restoreUnfinished(context, projectKey, trashId, signal)) {
    throw new StowageError(
      "CONFLICT",
      `a restore of ${trashId} in project ${projectKey} was cut short, part of it is back: restore it again to finish`,
      { reason: "RESTORE_UNFINISHED" },
    );
  }
  await mapConcurrent(
    manifest.objects,
    READ_CONCURRENCY,
    (_object, index) => context.store.delete(movedKey(context, projectKey, trashId, index), { signal }),
    signal,
  );
  await context.store.delete(manifestKey(context, projectKey, trashId), { signal });
  return asTrashed(trashId, manifest);
}

/** Deletes a trashed transcript for good; see `SessionStoreTrash.purgeFromTrash`. */
export async function purgeTranscript(
  context: SessionStoreContext,
  projectKey: unknown,
  trashId: unknown,
  { signal }: StoreOperationOptions = {},
): Promise<TrashedTranscript> {
  assertSessionStoreProjectKey(projectKey);
  assertTrashId(trashId);
  const manifest = await readManifest(context, projectKey, trashId, signal);
  return purge(context, projectKey, trashId, manifest, signal);
}

/** The manifests of one project (`projectKey`) or of every project, with their trash ids. */
async function* manifests(
  context: SessionStoreContext,
  projectKey: string | undefined,
  signal: AbortSignal | undefined,
): AsyncGenerator<{ projectKey: string; trashId: string; manifest: TrashManifest }> {
  const root = `${context.prefix}/${TRASH_SEGMENT}/`;
  const prefix = projectKey === undefined ? root : projectTrash(context, projectKey);
  for await (const item of context.store.iterate({ prefix, signal })) {
    const [project, name, ...rest] = item.key.slice(root.length).split("/");
    if (rest.length > 0 || !project || !name?.endsWith(MANIFEST_SUFFIX)) continue;
    const trashId = name.slice(0, -MANIFEST_SUFFIX.length);
    const bytes = await context.store.get(item.key, { signal });
    const manifest = bytes && parseManifest(bytes, project);
    if (manifest && isSafeId(trashId)) yield { projectKey: project, trashId, manifest };
  }
}

/** The project's trash, oldest delete first. */
export async function listTranscriptTrash(
  context: SessionStoreContext,
  projectKey: unknown,
  { signal }: StoreOperationOptions = {},
): Promise<TrashedTranscript[]> {
  assertSessionStoreProjectKey(projectKey);
  const listed: TrashedTranscript[] = [];
  for await (const { trashId, manifest } of manifests(context, projectKey, signal)) {
    listed.push(asTrashed(trashId, manifest));
  }
  return listed.sort((a, b) => a.trashedAt.localeCompare(b.trashedAt) || a.trashId.localeCompare(b.trashId));
}

/** Purges every project's trashed transcripts past their `purgeAfter`, at most `limit`. */
export async function purgeExpiredTranscripts(
  context: SessionStoreContext,
  { signal, limit = DEFAULT_PURGE_LIMIT }: StoreOperationOptions & { limit?: number } = {},
): Promise<number> {
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw new StowageError("INVALID_INPUT", `limit must be a positive integer, got ${describeValue(limit)}`);
  }
  const now = Date.now();
  let purged = 0;
  for await (const { projectKey, trashId, manifest } of manifests(context, undefined, signal)) {
    if (purged >= limit) break;
    throwIfAborted(signal, "session store trash purge");
    if (Date.parse(manifest.purgeAfter) > now) continue;
    // A restore cut short is finished, not purged: part of the transcript is live again.
    if (await restoreUnfinished(context, projectKey, trashId, signal)) {
      await restoreTranscript(context, projectKey, trashId, { signal });
      continue;
    }
    await purge(context, projectKey, trashId, manifest, signal);
    purged++;
  }
  return purged;
}
