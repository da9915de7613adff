import { expectStowageError, HOSTILE_KEYS } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { textItem, toolResultItem } from "../../src/builders/build-items.js";
import { createThreadFeeds } from "../../src/feed/thread-feeds.js";
import { FEED_STORES, keysUnder } from "../support/feed-stores.js";

describe.each(FEED_STORES)("deleteJob on the $name", ({ create }) => {
  it("deletes every thread of the job, its items and full payloads, and nothing of another job", async () => {
    const store = create();
    const feeds = createThreadFeeds({ store });
    await feeds.post({ jobId: "job-1", alias: "main" }, textItem("a"));
    await feeds.post(
      { jobId: "job-1", alias: "review" },
      toolResultItem({ invocationId: "t", output: "o".repeat(500_000) }),
    );
    // A job whose id starts with the other's: a prefix of keys, not of the job.
    await feeds.post({ jobId: "job-10", alias: "main" }, textItem("kept"));
    const keptKeys = await keysUnder(store, "threads/");
    expect(await feeds.deleteJob("job-1")).toBe(2);
    // Written out by hand: the README's layout, index/ full/ items/ per job.
    expect(await keysUnder(store, "threads/")).toEqual(
      keptKeys.filter((key) => /^threads\/\w+\/job-10\//.test(key)),
    );
    expect(await feeds.threads({ jobId: "job-1" })).toEqual({ threads: [], cursor: undefined });
    expect((await feeds.items({ jobId: "job-10", alias: "main" })).items).toHaveLength(1);
    expect(await feeds.deleteJob("job-1")).toBe(0);
  });

  it("forgets a deleted thread's failure: the same thread can be posted to again", async () => {
    const feeds = createThreadFeeds({ store: create() });
    const ref = { jobId: "job-2", alias: "main" };
    await expectStowageError(
      feeds.post(ref, { ...textItem("t"), extra: "e".repeat(400_000) }),
      "TOO_LARGE",
      "THREAD_ITEM_TOO_LARGE",
    );
    await expectStowageError(feeds.post(ref, textItem("refused")), "CONFLICT", "THREAD_FAILED");
    expect(await feeds.deleteJob("job-2")).toBe(1);
    await feeds.post(ref, textItem("a new thread"));
    expect(await feeds.thread(ref)).toMatchObject({ status: "active" });
  });

  it("refuses hostile job ids before touching the store", async () => {
    const feeds = createThreadFeeds({ store: create() });
    for (const jobId of [...HOSTILE_KEYS, "", "a/b", ".."]) {
      await expectStowageError(() => feeds.deleteJob(jobId as string), "INVALID_INPUT");
    }
  });
});
