import type { OperationOptions } from "@stowage/core";
import type { TenantBase } from "../create-stowage.js";
import type { SessionDeletionReport } from "../delete-session.js";
import type { TrashedThing } from "./trash-entries.js";

/**
 * A kind of thing that reaches its owner's trash by expiring (stored sessions, uploads past
 * retention): nothing moves, its expiry hides it from every read, and the sweep deletes it only
 * the deployment's trash days later. Until then its owner lists, restores or purges it here.
 */
export interface ExpiredTrash {
  /** The tenant's expired things still in their grace period. */
  list(tenant: TenantBase, options: OperationOptions): Promise<TrashedThing[]>;
  /** Brings one back; NOT_FOUND (`NOT_IN_TRASH`) when it is not there. */
  restore(tenant: TenantBase, id: unknown, options: OperationOptions): Promise<TrashedThing>;
  /** Deletes one now, with its audit row by `by`; NOT_FOUND (`NOT_IN_TRASH`) when it is not there. */
  purge(
    tenant: TenantBase,
    id: unknown,
    options: OperationOptions & { by?: string },
  ): Promise<SessionDeletionReport>;
}
