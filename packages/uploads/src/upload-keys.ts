import { assertPrincipal, assertSafeId, isSafeId, type Principal } from "@stowage/core";

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

/**
 * Where a session's "uploads deleted into the trash" mark is kept: outside `sessions/`, so that no
 * session listing, quota or sweep of the session's tree counts or removes it.
 */
export function uploadsTrashMarkKey(owner: Principal, sessionId: string): string {
  assertPrincipal(owner, "session owner");
  assertSafeId(sessionId, "sessionId");
  return `upload-trash/${owner.kind}/${owner.id}/${sessionId}.json`;
}
