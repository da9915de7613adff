import {
  type BlobStore,
  createBlobStore,
  createOwnedBlobStore,
  type OwnedBlobStore,
  type OwnerMarksLocation,
} from "@stowage/blob-store";
import { type ObjectStore, type OperationOptions, type Principal, StowageError } from "@stowage/core";
import type { SessionStoreSeal } from "@stowage/sessions";
import type { KeyRotationReport } from "../encryption/data-keys.js";
import { createEncryptedObjectStore } from "../encryption/encrypted-object-store.js";
import { type EncryptionOptions, type SealedShared, sealShared } from "../encryption/encryption-options.js";
import { sealSessionStoreRows } from "../encryption/sealed-session-store-rows.js";
import { createApiKeyRecords } from "./api-key-records.js";
import { type ApiKeys, createApiKeys } from "./api-keys.js";
import { type DeletionAudit, deletionAuditAt } from "./deletion-audit.js";
import { namespaceOf, ownerOf } from "./owner.js";
import { type RegisteredSessions, registeredSessionsOf } from "./registered-sessions.js";
import { SHARED_LAYOUT } from "./shared-layout.js";

/** What every process of a deployment reads from the store they share, before any principal's stores. */
export interface SharedStores {
  /** The store itself: sealed (encrypted at rest) when the deployment was given `encryption`. */
  shared: ObjectStore;
  /**
   * Re-wraps every data key under the key provider's current key-encryption key, rewriting only
   * the key records (`encryption-keys/`), never content; INVALID_INPUT (`ENCRYPTION_OFF`) when the
   * deployment is not encrypted.
   */
  rotateEncryptionKeys(options?: OperationOptions): Promise<KeyRotationReport>;
  /**
   * Another store (the uploads' store, say) sealed as {@link shared} is: each object under the
   * data key of the principal whose namespace its key is in (`<prefix>/<user|org>/<id>/…`), else
   * the deployment's, with the key records kept in the shared store. `raw` itself when the
   * deployment is not encrypted. The sealed store offers no signed URLs of its own.
   */
  sealStore(raw: ObjectStore): ObjectStore;
  /**
   * How a SessionStore that keeps its transcripts as rows (`createPostgresSessionStore({ seal })`)
   * seals `principal`'s: each row's text under the principal's data key (the one its namespace in
   * {@link shared} is sealed under), bound to its transcript. Undefined when the deployment is not
   * encrypted. Rows keep naming their data key, so a rotation leaves them readable.
   */
  sessionStoreSeal(principal: Principal): SessionStoreSeal | undefined;
  /** API keys: who a request acts as. A key issued by one process is valid in every other. */
  apiKeys: ApiKeys;
  /** Every principal's blobs, stored once. */
  blobs: BlobStore;
  /** A principal's view of {@link blobs}: only the blobs it stored. */
  ownedBlobs(principal: Principal): OwnedBlobStore;
  /**
   * Where those views keep their owners' marks: garbage collection's `ownerMarks`, so that a
   * collected blob's marks go with it (bytes stored again later stay absent to earlier owners).
   */
  ownerMarks: readonly OwnerMarksLocation[];
  /** The session ids registered in a principal's namespace. */
  registeredSessions(principal: Principal): RegisteredSessions;
  /** What was deleted of a principal's: append-only, kept 400 days (`DELETION_AUDIT_RETENTION_DAYS`). */
  deletionAudit(principal: Principal): DeletionAudit;
  /** What a sweep deleted without knowing whose it was (its owner is not recorded with it). */
  deploymentAudit: DeletionAudit;
}

/**
 * The deployment's own records in `shared` (API keys, registered sessions, blobs), laid out as
 * {@link SHARED_LAYOUT} says. It loads no domain package but blob-store, so a command that only
 * issues keys or reads blobs starts fast. With `encryption`, `shared` is sealed as in
 * `createStowage` (give both the same options: each reads what the other wrote).
 */
export function createSharedStores(options: {
  shared: ObjectStore;
  encryption?: EncryptionOptions;
}): SharedStores {
  return sharedStoresOver(options.shared, sealSharedStore(options.shared, options.encryption));
}

/** `raw` sealed as {@link SHARED_LAYOUT} says (its key records in `encryptionKeys`), or undefined without `encryption`. */
export function sealSharedStore(
  raw: ObjectStore,
  encryption: EncryptionOptions | undefined,
): SealedShared | undefined {
  return encryption ? sealShared(raw, SHARED_LAYOUT.encryptionKeys, encryption) : undefined;
}

/** The deployment's records over `raw`, or over its seal when there is one. */
export function sharedStoresOver(raw: ObjectStore, sealed: SealedShared | undefined): SharedStores {
  const shared = sealed?.shared ?? raw;
  const blobs = createBlobStore({ store: shared, layout: "sharded", prefix: SHARED_LAYOUT.blobs });
  return {
    shared,
    rotateEncryptionKeys: async (rotateOptions) => {
      if (!sealed) {
        throw new StowageError(
          "INVALID_INPUT",
          "this deployment is not encrypted: it has no data keys to rotate",
          {
            reason: "ENCRYPTION_OFF",
          },
        );
      }
      return sealed.rotate(rotateOptions);
    },
    sealStore: (raw) => (sealed ? createEncryptedObjectStore(raw, sealed.keys) : raw),
    sessionStoreSeal: (principal) => (sealed ? sealSessionStoreRows(sealed.keys, principal) : undefined),
    apiKeys: createApiKeys({
      records: createApiKeyRecords({ store: shared, prefix: SHARED_LAYOUT.apiKeys }),
    }),
    blobs,
    ownedBlobs: (principal) =>
      createOwnedBlobStore({
        blobs,
        owner: ownerOf(principal),
        marks: shared,
        prefix: SHARED_LAYOUT.blobOwners,
      }),
    ownerMarks: [{ store: shared, prefix: SHARED_LAYOUT.blobOwners }],
    registeredSessions: (principal) => registeredSessionsOf(shared, SHARED_LAYOUT.registrations, principal),
    deletionAudit: (principal) =>
      deletionAuditAt(shared, `${SHARED_LAYOUT.deletionAudit}${namespaceOf(principal)}/`),
    // Principal kinds are `user` and `org`: `deployment/` never meets a principal's namespace.
    deploymentAudit: deletionAuditAt(shared, `${SHARED_LAYOUT.deletionAudit}deployment/`),
  };
}
