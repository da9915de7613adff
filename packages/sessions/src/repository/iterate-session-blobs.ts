import type {
  ListSessionBlobsOptions,
  SessionBlobRecord,
  SessionBlobRepository,
} from "./session-blob-repository.js";

/**
 * Every live record of every owner, page by page through `repository.list` (one page in memory
 * at a time), in id order: the stored sessions a garbage collection of blobs reads as roots.
 */
export async function* iterateSessionBlobs(
  repository: SessionBlobRepository,
  options: Omit<ListSessionBlobsOptions, "cursor"> = {},
): AsyncGenerator<SessionBlobRecord> {
  let cursor: string | undefined;
  do {
    const page = await repository.list({ ...options, ...(cursor === undefined ? {} : { cursor }) });
    yield* page.records;
    cursor = page.cursor;
  } while (cursor !== undefined);
}
