import {
  assertSessionId,
  describeValue,
  mapConcurrent,
  type OperationOptions,
  StowageError,
} from "@stowage/core";
import type { ExpiredUpload, UploadService } from "@stowage/uploads";
import type { TenantBase } from "../create-stowage.js";
import type { SessionDeletionReport } from "../delete-session.js";
import type { ExpiredTrash } from "./expired-trash.js";
import type { TrashedThing } from "./trash-entries.js";

// Uploads reach the trash by passing the deployment's retention: the upload service stops listing
// and serving them from their expiry, and the retention sweep deletes them only `trashDays` later.
// Until then their owner sees them here, one item per upload (`<sessionId>/<filename>`, the id
// the deletion audit gives uploads), and can bring one back (its retention starts again) or purge
// it. They stay counted in the quota ledger meanwhile.

/** The deployment's upload service (with its retention, if any) and how long an expired upload stays in the trash. */
export interface UploadTrash {
  uploads: UploadService;
  retentionDays: number | undefined;
  graceMs: number;
}

/**
 * INVALID_INPUT (`UPLOAD_RETENTION_MISMATCH`) unless the deployment's `uploadRetentionDays` (what
 * its sweep deletes by) is the upload service's `retentionDays` (what it stops listing and serving
 * by): with two figures an upload would be in the trash while still listed, or swept unannounced.
 */
export function assertUploadRetentionAgrees(deployment: {
  uploads?: UploadService;
  uploadRetentionDays?: number;
}): void {
  const { uploads, uploadRetentionDays } = deployment;
  if (!uploads || uploads.retentionDays === uploadRetentionDays) return;
  throw new StowageError(
    "INVALID_INPUT",
    `the deployment's uploadRetentionDays (${describeValue(uploadRetentionDays)}) must be its upload service's retentionDays (${describeValue(uploads.retentionDays)})`,
    { reason: "UPLOAD_RETENTION_MISMATCH" },
  );
}

/** `<sessionId>/<filename>`, split; INVALID_INPUT when the session id part is not one (the service checks the filename). */
function uploadIdParts(id: unknown): { sessionId: string; filename: string } {
  const slash = typeof id === "string" ? id.indexOf("/") : -1;
  if (typeof id !== "string" || slash <= 0) {
    throw new StowageError(
      "INVALID_INPUT",
      `an upload in the trash is named <sessionId>/<filename>, got ${describeValue(id)}`,
      { reason: "INVALID_UPLOAD_ID" },
    );
  }
  const sessionId = id.slice(0, slash);
  assertSessionId(sessionId);
  return { sessionId, filename: id.slice(slash + 1) };
}

const notInTrash = (id: string) =>
  new StowageError("NOT_FOUND", `nothing in the trash is upload ${id}`, { reason: "NOT_IN_TRASH" });

/** An expired upload as its owner's trash lists it. */
function trashedUpload(upload: ExpiredUpload, graceMs: number): TrashedThing {
  return {
    kind: "upload",
    id: `${upload.sessionId}/${upload.filename}`,
    trashedAt: upload.expiresAt.toISOString(),
    purgeAfter: new Date(upload.expiresAt.getTime() + graceMs).toISOString(),
    // Deleted with its session's uploads (`deleteSessionUploads`), or past retention.
    by: upload.deletedBy ?? "retention",
    bytes: upload.size,
  };
}

/**
 * The tenant's uploads past retention, one item per upload: `trashedAt` when it expired,
 * `purgeAfter` when the sweep deletes it, `by` `retention`. A session in the trash as a whole holds
 * its uploads: they come back or go with it, and are not listed here.
 */
async function listTrashedUploads(
  trash: UploadTrash | undefined,
  tenant: TenantBase,
  options: OperationOptions,
): Promise<TrashedThing[]> {
  if (!trash) return [];
  const expired = await trash.uploads.listExpiredUploads(tenant.principal, options);
  const sessions = [...new Set(expired.map((upload) => upload.sessionId))];
  const states = await mapConcurrent(sessions, 8, (sessionId) =>
    tenant.registeredSessions.state(sessionId, options),
  );
  const trashedSessions = new Set(sessions.filter((_, index) => states[index] === "trashed"));
  return expired
    .filter((upload) => !trashedSessions.has(upload.sessionId))
    .map((upload) => trashedUpload(upload, trash.graceMs));
}

/**
 * The tenant's upload `id` as its trash lists it, with its parts; NOT_FOUND (`NOT_IN_TRASH`) when
 * it is not past retention or its session is in the trash as a whole.
 */
async function trashedUploadOf(
  trash: UploadTrash | undefined,
  tenant: TenantBase,
  id: unknown,
  options: OperationOptions,
): Promise<{ item: TrashedThing; sessionId: string; filename: string; trash: UploadTrash }> {
  const { sessionId, filename } = uploadIdParts(id);
  if (!trash) throw notInTrash(id as string);
  const [expired] = await trash.uploads.listExpiredUploads(tenant.principal, {
    ...options,
    sessionId,
    filename,
  });
  if (!expired || (await tenant.registeredSessions.state(sessionId, options)) === "trashed") {
    throw notInTrash(id as string);
  }
  return { item: trashedUpload(expired, trash.graceMs), sessionId, filename, trash };
}

/** Brings an upload past retention back, byte for byte: its retention starts again from now. */
async function restoreTrashedUpload(
  uploadTrash: UploadTrash | undefined,
  tenant: TenantBase,
  id: unknown,
  options: OperationOptions,
): Promise<TrashedThing> {
  const { item, sessionId, filename, trash } = await trashedUploadOf(uploadTrash, tenant, id, options);
  // Swept, restored or uploaded again since the listing: said, never a silent success.
  if (!(await trash.uploads.restoreExpiredUpload(tenant.principal, sessionId, filename, options))) {
    throw notInTrash(item.id);
  }
  return item;
}

/** Deletes an upload past retention now, the quota released, with an `uploads` audit row by `by`. */
async function purgeTrashedUpload(
  uploadTrash: UploadTrash | undefined,
  tenant: TenantBase,
  id: unknown,
  options: OperationOptions & { by?: string },
): Promise<SessionDeletionReport> {
  const { by = "operator", ...operation } = options;
  const { item, sessionId, filename, trash } = await trashedUploadOf(uploadTrash, tenant, id, operation);
  const bytes = await trash.uploads.purgeExpiredUpload(tenant.principal, sessionId, filename, operation);
  if (bytes === null) throw notInTrash(id as string);
  const why =
    item.by === "retention"
      ? `past the retention of ${trash.retentionDays} days`
      : `its session's uploads deleted by ${item.by}`;
  await tenant.deletionAudit.append(
    [
      {
        kind: "uploads",
        id: `${sessionId}/${filename}`,
        bytes,
        by,
        reason: `purged from the trash: ${why}`,
      },
    ],
    operation,
  );
  return { sessionId, deleted: { uploads: { deletedObjects: 1, deletedBytes: bytes } } };
}

/** The trash of uploads past retention (kind `upload`); empty where uploads are kept. */
export function uploadTrash(trash: UploadTrash | undefined): ExpiredTrash {
  return {
    list: (tenant, options) => listTrashedUploads(trash, tenant, options),
    restore: (tenant, id, options) => restoreTrashedUpload(trash, tenant, id, options),
    purge: (tenant, id, options) => purgeTrashedUpload(trash, tenant, id, options),
  };
}
