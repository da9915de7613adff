import { type ListOptions, mapConcurrent, type ObjectStore } from "@stowage/core";
import { describe, expect, it } from "vitest";
import { textItem } from "../../src/builders/build-items.js";
import { createThreadFeeds } from "../../src/feed/thread-feeds.js";
import { FEED_STORES } from "../support/feed-stores.js";

// 2,000 items, 20 pages: enough to show a page never reads the whole thread, and quick on a busy disk.
const ITEMS = 2_000;
const PAGE = 100;

/** `store` with every list and get recorded, so a test can see how much one page reads. */
function recordingStore(store: ObjectStore) {
  const lists: ListOptions[] = [];
  const gets: string[] = [];
  const recorded: ObjectStore = {
    ...store,
    list: (options) => {
      lists.push(options ?? {});
      return store.list(options);
    },
    get: (key, options) => {
      gets.push(key);
      return store.get(key, options);
    },
  };
  return { store: recorded, lists, gets };
}

describe.each(FEED_STORES)("paging on the $name", ({ create }) => {
  it(`reads ${ITEMS.toLocaleString("en-US")} items back in the order they were appended, one bounded listing and at most a page of reads per page`, async () => {
    const { store, lists, gets } = recordingStore(create());
    const feeds = createThreadFeeds({ store });
    const thread = { jobId: "job-1", alias: "long" };
    // Eight posts in flight: a thread's appends still run in turn, so the order posts resolve in
    // is the order they were appended, which the listing must give back.
    const appended: string[] = [];
    await mapConcurrent(
      Array.from({ length: ITEMS }, (_, index) => `i-${index}`),
      8,
      async (id) => appended.push((await feeds.post(thread, textItem(`step ${id}`, { id }))).id!),
    );

    const ids: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      lists.length = 0;
      gets.length = 0;
      const page = await feeds.items(thread, { limit: PAGE, ...(cursor === undefined ? {} : { cursor }) });
      pages++;
      // Never the whole thread: one listing of at most a page, and a read per listed item.
      expect(lists).toHaveLength(1);
      expect(lists[0]!.limit).toBe(PAGE);
      expect(gets.length).toBeLessThanOrEqual(PAGE);
      expect(page.items.length).toBeLessThanOrEqual(PAGE);
      ids.push(...page.items.map((item) => item.id!));
      cursor = page.cursor;
    } while (cursor !== undefined);

    expect(pages).toBe(ITEMS / PAGE);
    expect(ids).toHaveLength(ITEMS);
    expect(ids).toEqual(appended);
  });
});
