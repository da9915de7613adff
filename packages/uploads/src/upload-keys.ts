import { randomBytes } from "node:crypto";
import { assertPrincipal, assertSafeId, isSafeId, type Principal, StowageError } from "@stowage/core";

// The folder beside `session.json` and `diff.txt` that holds a session's uploads. "artifacts" is
// the design document's S3 layout (`sessions/<user|org>/<id>/<sessionId>/artifacts/<file>`), a
// wire name kept as the document gives it.
const UPLOADS_FOLDER = "artifacts";
// Stowage's own folder beside it: what each signed URL bound, kept until the upload is verified.
// Outside `artifacts/`, so a listing never shows it; inside the session, so deleting the session
// deletes it too.
const RECORDS_FOLDER = "upload-records";

/** `sessions/user/<userId>/<sessionId>/` or `sessions/org/<orgId>/<sessionId>/`. */
export function sessionPrefix(owner: Principal, sessionId: string): string {
  assertPrincipal(owner, "session owner");
  assertSafeId(sessionId, "sessionId");
  return `sessions/${owner.kind}/${owner.id}/${sessionId}/`;
}

/** `<session prefix>artifacts/`: only uploads live here, never `session.json` or `diff.txt`. */
export function uploadsPrefix(owner: Principal, sessionId: string): string {
  return `${sessionPrefix(owner, sessionId)}${UPLOADS_FOLDER}/`;
}

/** The key of one upload; `filename` must already be a checked upload filename. */
export function uploadKey(owner: Principal, sessionId: string, filename: string): string {
  return `${uploadsPrefix(owner, sessionId)}${filename}`;
}

/** `<session prefix>upload-records/<filename>/`: the records of one upload's signed URLs. */
export function uploadRecordsPrefix(owner: Principal, sessionId: string, filename: string): string {
  return `${sessionPrefix(owner, sessionId)}${RECORDS_FOLDER}/${filename}/`;
}

/** Where a key sits in a session's tree, as {@link sessionKeyParts} reads it. */
export type SessionKeyPlace =
  | { folder: "uploads"; filename: string }
  | { folder: "records"; filename: string; name: string }
  | { folder: "other" };

/** The session a key belongs to and its place in it; undefined for a key outside every session. */
export function sessionKeyParts(
  key: string,
): { owner: Principal; sessionId: string; scope: string; place: SessionKeyPlace } | undefined {
  const [root, kind, id, sessionId, folder, filename, name, ...deeper] = key.split("/");
  const inSession = root === "sessions" && (kind === "user" || kind === "org") && folder !== undefined;
  if (!inSession || !isSafeId(id) || !isSafeId(sessionId)) {
    return undefined;
  }
  const scope = `sessions/${kind}/${id}/${sessionId}/`;
  const owner: Principal = { kind, id };
  // Only direct children of `artifacts/` are uploads; deeper keys were not written by this package.
  if (folder === UPLOADS_FOLDER && filename && name === undefined) {
    return { owner, sessionId, scope, place: { folder: "uploads", filename } };
  }
  if (folder === RECORDS_FOLDER && filename && name && deeper.length === 0) {
    return { owner, sessionId, scope, place: { folder: "records", filename, name } };
  }
  return { owner, sessionId, scope, place: { folder: "other" } };
}

// A session's uploads deleted into the trash are marked outside `sessions/`, so that no session
// listing, quota or sweep of the session's tree counts or removes a mark: one object per deletion,
// `upload-trash/<user|org>/<id>/<sessionId>/<at>-<random>-<by>.json`, never overwritten.
/** Where every trash mark of every session lives: the sweep lists from here. */
export const TRASH_MARKS_ROOT = "upload-trash/";
// The mark's time in ms, zero-padded to 16 digits (every time a Date holds fits), so that the
// names of one session's marks sort by time; the random part keeps two marks of one millisecond
// apart. `by` is a safe id (letters, digits, `._:@-`), safe inside one key segment.
const MARK_TIME_DIGITS = 16;
const MARK_NAME = /^(\d{16})-([0-9a-f]{16})-(.+)\.json$/;

/** `upload-trash/<user|org>/<id>/<sessionId>/`: every trash mark of one session's uploads. */
export function uploadsTrashMarksPrefix(owner: Principal, sessionId: string): string {
  assertPrincipal(owner, "session owner");
  assertSafeId(sessionId, "sessionId");
  return `${TRASH_MARKS_ROOT}${owner.kind}/${owner.id}/${sessionId}/`;
}

/** A new key for one deletion's mark: `at` and `by` are in its name, made unique by a random part. */
export function uploadsTrashMarkKey(owner: Principal, sessionId: string, at: Date, by: string): string {
  const prefix = uploadsTrashMarksPrefix(owner, sessionId);
  assertSafeId(by, "by");
  const ms = at.getTime();
  if (!Number.isSafeInteger(ms) || ms < 0) {
    throw new StowageError("INVALID_INPUT", `a trash mark's time must be a time since 1970, got ${ms}`);
  }
  const time = String(ms).padStart(MARK_TIME_DIGITS, "0");
  return `${prefix}${time}-${randomBytes(8).toString("hex")}-${by}.json`;
}

/**
 * The session, time and author a trash mark's key names; undefined for any other key under
 * `upload-trash/` (another kind, an unsafe id, another depth, another name: not written here).
 */
export function uploadsTrashMarkParts(
  key: string,
): { owner: Principal; sessionId: string; at: Date; by: string } | undefined {
  if (!key.startsWith(TRASH_MARKS_ROOT)) return undefined;
  const [kind, id, sessionId, name, ...deeper] = key.slice(TRASH_MARKS_ROOT.length).split("/");
  if (deeper.length > 0 || (kind !== "user" && kind !== "org") || !isSafeId(id) || !isSafeId(sessionId)) {
    return undefined;
  }
  const match = MARK_NAME.exec(name ?? "");
  const at = new Date(Number(match?.[1]));
  const by = match?.[3];
  if (Number.isNaN(at.getTime()) || !isSafeId(by)) return undefined;
  return { owner: { kind, id }, sessionId, at, by };
}
