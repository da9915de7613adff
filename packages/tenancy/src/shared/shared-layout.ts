/**
 * Where a deployment keeps its own records in the shared store, beside the stores of the table
 * (`DEFAULT_STORES`): one fact, written once. A store of the table may take no prefix that
 * overlaps one of these (`createStowage` checks).
 */
export const SHARED_LAYOUT = {
  /** API key records, one per key (`<id>.json`), only hashes. */
  apiKeys: "api-keys/",
  /** Registered session ids, `<kind>/<id>/<sessionId>`. */
  registrations: "registered-sessions/",
  /** Every principal's blobs, deduplicated, sharded (`<aa>/<sha256>`). */
  blobs: "blobs/",
  /** Which principal stored which blob: one empty mark per blob and owner. */
  blobOwners: "blob-owners/",
  /**
   * What was deleted, per principal (`<kind>/<id>/<YYYY-MM-DD>/<ms>-<sequence>-<random>.json`)
   * and for the deployment where a sweep does not know the owner (`deployment/…`); kept 400 days.
   */
  deletionAudit: "deletion-audit/",
  /**
   * Data keys of an encrypted deployment, wrapped by its key provider (`<scope>/<data key id>.json`,
   * the scope a principal's namespace or `deployment`): the only objects stored unsealed.
   */
  encryptionKeys: "encryption-keys/",
  /**
   * Every principal's trash: one entry per stay of a deleted session
   * (`<kind>/<id>/<sessionId>/<trashId>.json`) and, beside it, the one decision (restore or purge)
   * about it (`.decision`, written create-only).
   */
  trash: "trash/",
} as const;
