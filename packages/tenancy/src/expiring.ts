import { describeValue, type OperationOptions, StowageError } from "@stowage/core";
import type { TenantBase } from "./create-stowage.js";
import type { DefaultStores } from "./default-stores.js";
import type { Deployment, OpenedStore } from "./store-definition.js";

/**
 * How far ahead a principal may set an expiry when the deployment does not say: 30 days.
 * Documented, not exported: a caller passes its own `maxExpiryDays`.
 */
const DEFAULT_MAX_EXPIRY_DAYS = 30;
const DAY_MS = 24 * 60 * 60 * 1000;

/** What can expire, by the name of the store that keeps it. */
export type ExpiringKind = "sessionBlobs" | "uploads";

/** One stored thing that expires within the window asked for. */
export interface ExpiringThing {
  kind: ExpiringKind;
  /** The session id (a stored session), or `<sessionId>/<filename>` (an upload). */
  id: string;
  /** ISO 8601 time it expires (and a sweep may delete it). */
  expiresAt: string;
  bytes: number;
  /** The request a stored session was captured for. */
  requestId?: string;
}

/** What {@link listExpiring} and {@link extendExpiry} read: the tenant's stores that hold expiring things. */
type ExpiringTenant = TenantBase & {
  sessionBlobs?: OpenedStore<DefaultStores["sessionBlobs"]>;
  uploads?: OpenedStore<DefaultStores["uploads"]>;
};

/**
 * What the principal holds that expires within `withinMs` of `now`, soonest first: stored sessions
 * (their TTL) and, where the deployment keeps uploads for a time (`uploadRetentionDays`), uploads
 * (their last change plus the retention). Hot-state versions are kept by count (`keepVersions`),
 * never by time: they do not expire and are not listed.
 */
export async function listExpiring(
  tenant: ExpiringTenant,
  deployment: Deployment,
  withinMs: number,
  options: OperationOptions & { now?: Date } = {},
): Promise<ExpiringThing[]> {
  if (!Number.isFinite(withinMs) || withinMs < 0) {
    throw new StowageError(
      "INVALID_INPUT",
      `within must be a non-negative duration, got ${describeValue(withinMs)}`,
    );
  }
  const { now = new Date(), ...operation } = options;
  const until = now.getTime() + withinMs;
  const found: ExpiringThing[] = [];
  if (tenant.sessionBlobs && deployment.sessionBlobs) {
    let cursor: string | undefined;
    do {
      const page = await tenant.sessionBlobs.list({
        ...operation,
        limit: 1000,
        ...(cursor ? { cursor } : {}),
      });
      for (const record of page.sessions) {
        if (record.expiresAt === null || record.expiresAt.getTime() > until) continue;
        found.push({
          kind: "sessionBlobs",
          id: record.sessionId,
          expiresAt: record.expiresAt.toISOString(),
          bytes: record.storedBytes,
          requestId: record.requestId,
        });
      }
      cursor = page.cursor;
    } while (cursor !== undefined);
  }
  const retentionDays = deployment.uploadRetentionDays;
  if (tenant.uploads && deployment.uploads && retentionDays !== undefined) {
    for await (const sessionId of tenant.registeredSessions.list(operation)) {
      if (!(await tenant.registeredSessions.has(sessionId, operation))) continue;
      for (const upload of await deployment.uploads.listUploads(tenant.principal, sessionId, operation)) {
        // The upload service's own figure where it knows the retention (`retentionDays`).
        const expiresAt =
          upload.expiresAt?.getTime() ?? upload.lastModified.getTime() + retentionDays * DAY_MS;
        if (expiresAt > until) continue;
        found.push({
          kind: "uploads",
          id: `${sessionId}/${upload.filename}`,
          expiresAt: new Date(expiresAt).toISOString(),
          bytes: upload.size,
        });
      }
    }
  }
  return found.sort((a, b) => a.expiresAt.localeCompare(b.expiresAt));
}

/**
 * Sets when one of the principal's things expires, no later than the deployment's maximum
 * (`maxExpiryDays` from now: INVALID_INPUT `EXPIRY_TOO_LATE` with the limit beyond it). Stored
 * sessions only: an upload's expiry follows from its last change and the deployment's retention,
 * the same for every upload (INVALID_INPUT `EXPIRY_NOT_EXTENSIBLE`). NOT_FOUND when the principal
 * holds no live thing of that id (another principal's looks the same). Returns the new expiry.
 */
export async function extendExpiry(
  tenant: ExpiringTenant,
  deployment: Deployment,
  kind: string,
  id: string,
  expiresAt: Date,
  options: OperationOptions & { now?: Date } = {},
): Promise<{ kind: ExpiringKind; id: string; expiresAt: string; changed: number }> {
  const { now = new Date(), ...operation } = options;
  if (kind !== "sessionBlobs") {
    throw new StowageError(
      "INVALID_INPUT",
      kind === "uploads"
        ? "an upload expires by the deployment's retention from its last change; only sessionBlobs take an expiry"
        : `kind must be sessionBlobs, got ${describeValue(kind)}`,
      { reason: kind === "uploads" ? "EXPIRY_NOT_EXTENSIBLE" : "UNKNOWN_KIND" },
    );
  }
  if (!(expiresAt instanceof Date) || Number.isNaN(expiresAt.getTime()) || expiresAt <= now) {
    throw new StowageError(
      "INVALID_INPUT",
      `expiresAt must be a time after now, got ${describeValue(expiresAt)}`,
    );
  }
  const maxDays = deployment.maxExpiryDays ?? DEFAULT_MAX_EXPIRY_DAYS;
  const latest = new Date(now.getTime() + maxDays * DAY_MS);
  if (expiresAt > latest) {
    throw new StowageError(
      "INVALID_INPUT",
      `expiresAt may be at most ${maxDays} days from now (${latest.toISOString()}), got ${expiresAt.toISOString()}`,
      { reason: "EXPIRY_TOO_LATE", details: { limitDays: maxDays, latest: latest.toISOString() } },
    );
  }
  if (!tenant.sessionBlobs || !deployment.sessionBlobs) {
    throw new StowageError("NOT_FOUND", `no stored session ${id}`);
  }
  const changed = await tenant.sessionBlobs.extendExpiry(id, expiresAt, operation);
  if (changed === 0) throw new StowageError("NOT_FOUND", `no stored session ${id}`);
  return { kind, id, expiresAt: expiresAt.toISOString(), changed };
}
