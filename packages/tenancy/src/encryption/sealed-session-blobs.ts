import {
  type SessionAgent,
  type SessionBlobRecord,
  type SessionBlobRepository,
  type SessionBlobSummary,
  verifySessionBlob,
} from "@stowage/sessions";
import { principalOfOwner } from "../shared/owner.js";
import type { DataKeys } from "./data-keys.js";
import { DEPLOYMENT_SCOPE } from "./encrypted-object-store.js";
import { openBytes, sealBytes } from "./sealed-body.js";
import { plaintextSize } from "./sealed-format.js";

/** Whose data key seals an owner's stored sessions: the principal the owner names. */
function scopeOfOwner(owner: string): string {
  const principal = principalOfOwner(owner);
  return principal ? `${principal.kind}/${principal.id}` : DEPLOYMENT_SCOPE;
}

/**
 * What a stored session's seal is bound to, in place of an object key: its owner, request and
 * session (the repository's upsert key), so that a blob moved to another row fails (INTEGRITY).
 */
const boundName = (record: { owner: string; requestId: string; sessionId: string }) =>
  `session-blobs/${record.owner}/${record.requestId}/${record.sessionId}`;

const plainSummary = <T extends Pick<SessionBlobSummary, "blobSizeBytes">>(record: T): T => ({
  ...record,
  blobSizeBytes: plaintextSize(record.blobSizeBytes),
});

/**
 * `repository` with every archive's blob sealed under its owner's data key (the same format and
 * keys as the shared store): the database row holds ciphertext; what callers create and read is
 * the archive. Ids, owners, sizes and expiry stay in clear: the sweeps and listings need them.
 */
export function sealSessionBlobs(repository: SessionBlobRepository, keys: DataKeys): SessionBlobRepository {
  async function open(record: SessionBlobRecord | null): Promise<SessionBlobRecord | null> {
    if (record === null) return null;
    const scope = scopeOfOwner(record.owner);
    // The record's blob is this read's own (`SessionBlobRepository`): opened over itself.
    const blob = await openBytes((id) => keys.dataKey(scope, id), boundName(record), record.blob, {
      overSealed: true,
    });
    return { ...record, blob, blobSizeBytes: blob.byteLength };
  }
  return {
    ...repository,
    async create(input, options = {}) {
      // Read through here, as the repository would (it cannot read ciphertext): a blob that could
      // not be restored is refused before anything is stored.
      const { rawSizeBytes } = await verifySessionBlob(input, {
        agent: input.agentType as SessionAgent,
        ...(options.signal ? { signal: options.signal } : {}),
      });
      const dataKey = await keys.current(scopeOfOwner(input.owner), options);
      const stored = await repository.create(
        {
          ...input,
          rawSizeBytes,
          blob: sealBytes(dataKey, boundName(input), input.blob),
          storedBytes: input.storedBytes ?? input.blob.byteLength,
        },
        { ...options, preverified: true },
      );
      return { ...stored, blob: input.blob, blobSizeBytes: input.blob.byteLength };
    },
    getLatestForRequest: async (owner, requestId, options) =>
      open(await repository.getLatestForRequest(owner, requestId, options)),
    getBySessionId: async (owner, sessionId, options) =>
      open(await repository.getBySessionId(owner, sessionId, options)),
    async list(options) {
      const page = await repository.list(options);
      const records: SessionBlobRecord[] = [];
      for (const record of page.records) records.push((await open(record))!);
      return { ...page, records };
    },
    // What the sweep tells its audit is the archive's size, not the ciphertext's.
    deleteExpired: (options = {}) => {
      const { onDeleted } = options;
      return repository.deleteExpired(
        onDeleted ? { ...options, onDeleted: (deleted) => onDeleted(deleted.map(plainSummary)) } : options,
      );
    },
    async listByOwner(owner, options) {
      const page = await repository.listByOwner(owner, options);
      return { ...page, sessions: page.sessions.map(plainSummary) };
    },
  };
}
