import { randomBytes } from "node:crypto";
import {
  mapConcurrent,
  type ObjectStore,
  type OperationOptions,
  type Principal,
  StowageError,
} from "@stowage/core";
import { sessionKeyParts, uploadRecordsPrefix } from "./upload-keys.js";
import { parseJson } from "./upload-records.js";
import { LANDING_GRACE_MS, type UploadVerifier } from "./upload-verification.js";

// A session's deletion revokes its upload URLs, but a URL whose PUT goes straight to the storage
// server (S3) cannot be taken back: until it expires, its bytes still land, after the deletion has
// listed and removed everything. Nobody completes or lists a deleted session, so nothing else
// would find them: they would stay in the bucket, counted by no quota. The deletion leaves a note
// of the uploads whose URLs could still write, outside every session (a deletion of the session
// never removes it); the sweep settles each of them as a listing after a revocation does (what
// landed through a revoked URL is deleted) until the last of those URLs can write no more.

/** Where the notes live: `revoked-uploads/<user|org>/<id>/<sessionId>/<until>-<random>.json`. */
const NOTES_ROOT = "revoked-uploads/";
const NOTE_NAME = /^(\d{1,16})-[0-9a-f]{16}\.json$/;
const SETTLE_CONCURRENCY = 4;

/** What a note holds: upload keys of one session, and when the last URL that can write them stops. */
interface RevokedGrantsNote {
  keys: string[];
  until: number;
}

/** The note of one session's revoked URLs that can still write; nothing when there are none. */
export async function noteRevokedGrants(
  store: ObjectStore,
  scope: string,
  grants: ReadonlyMap<string, number>,
  options: OperationOptions,
): Promise<void> {
  if (grants.size === 0) return;
  const until = Math.max(...grants.values()) + LANDING_GRACE_MS;
  const note: RevokedGrantsNote = { keys: [...grants.keys()], until };
  const key = `${NOTES_ROOT}${scope.slice("sessions/".length)}${until}-${randomBytes(8).toString("hex")}.json`;
  await store.put(key, new TextEncoder().encode(JSON.stringify(note)), {
    ...options,
    contentType: "application/json",
  });
}

function decodeNote(bytes: Uint8Array | null): RevokedGrantsNote | undefined {
  const value = parseJson(bytes);
  if (!value || !Array.isArray(value.keys) || !Number.isSafeInteger(value.until)) return undefined;
  const keys = value.keys.filter(
    (key): key is string => typeof key === "string" && sessionKeyParts(key)?.place.folder === "uploads",
  );
  return { keys, until: value.until as number };
}

/** What one pass over the notes did. */
export interface RevokedGrantsSweep {
  /** Uploads that had landed through a revoked URL, deleted now. */
  removed: number;
  /** Which they were (whose, in which session): what an audit of deletions records. */
  uploads: { principal: Principal; sessionId: string; filename: string }[];
}

/**
 * Settles every upload a note names (a revoked URL's upload is deleted, one of the id registered
 * again counts as a listing would count it) and removes the notes whose URLs can write no more.
 */
export async function sweepRevokedGrants(
  ctx: { store: ObjectStore; verifier: UploadVerifier; now: () => number },
  { signal }: OperationOptions = {},
): Promise<RevokedGrantsSweep> {
  const io = signal ? { signal } : {};
  const uploads: RevokedGrantsSweep["uploads"] = [];
  const notes: string[] = [];
  for await (const item of ctx.store.iterate({ prefix: NOTES_ROOT, ...io })) notes.push(item.key);
  for (const noteKey of notes) {
    const name = noteKey.slice(noteKey.lastIndexOf("/") + 1);
    // Read before settling: a note past its time is removed only after one last settle.
    const done = Number(NOTE_NAME.exec(name)?.[1] ?? 0) <= ctx.now();
    const note = decodeNote(await ctx.store.get(noteKey, io));
    const verdicts = await mapConcurrent(
      note?.keys ?? [],
      SETTLE_CONCURRENCY,
      async (key) => {
        const parts = sessionKeyParts(key)!;
        if (parts.place.folder !== "uploads") return "absent";
        const { owner, sessionId, scope } = parts;
        const location = {
          scope,
          key,
          recordsPrefix: uploadRecordsPrefix(owner, sessionId, parts.place.filename),
        };
        try {
          return (await ctx.verifier.settle(location, undefined, { revoked: true, ...io })).state;
        } catch (err) {
          if (StowageError.is(err, "ABORTED")) throw err;
          return "failed";
        }
      },
      signal,
    );
    for (const [index, state] of verdicts.entries()) {
      if (state !== "revoked" && state !== "refused") continue;
      const parts = sessionKeyParts(note!.keys[index]!)!;
      if (parts.place.folder !== "uploads") continue;
      uploads.push({ principal: parts.owner, sessionId: parts.sessionId, filename: parts.place.filename });
    }
    if ((done || !note) && !verdicts.includes("failed")) await ctx.store.delete(noteKey, io);
  }
  return { removed: uploads.length, uploads };
}
