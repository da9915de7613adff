import { assertSafeId, mapConcurrent, pushAll } from "@stowage/core";
import { type FeedContext, optionsObject } from "./feed-context.js";

/** Objects `deleteJob` deletes at once. */
const DELETE_CONCURRENCY = 16;

/**
 * `ThreadFeeds.deleteJob`: every thread of the job, records first (so a deletion cut short leaves
 * no thread that lists), then posted items and full payloads; forgets the job's failed threads.
 * Returns how many threads there were.
 */
export async function deleteJob(
  ctx: FeedContext,
  jobId: string,
  deleteOptions?: { signal?: AbortSignal },
): Promise<number> {
  assertSafeId(jobId, "jobId");
  const { signal } = optionsObject(deleteOptions, "deleteJob options");
  const { store, layout } = ctx;
  let threadCount = 0;
  for (const prefix of layout.jobPrefixes(jobId)) {
    const keys: string[] = [];
    for await (const page of store.keys({ prefix, ...(signal ? { signal } : {}) }).byPage())
      pushAll(keys, page);
    if (prefix === layout.indexPrefix(jobId)) threadCount = keys.length;
    await mapConcurrent(
      keys,
      DELETE_CONCURRENCY,
      (key) => store.delete(key, signal ? { signal } : {}),
      signal,
    );
  }
  // A failure remembered for a deleted thread would refuse the first post of a new one.
  const jobTopics = layout.topic({ jobId, alias: "" });
  for (const topic of [...ctx.failedThreads.keys()])
    if (topic.startsWith(jobTopics)) ctx.failedThreads.delete(topic);
  return threadCount;
}
