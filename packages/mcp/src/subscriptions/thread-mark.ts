import type { ThreadFeeds } from "@stowage/thread-items";

/**
 * Where a thread's listing ended when it was last looked at: the cursor of a page boundary near
 * the end and how many items follow it. The thread grew when either moved.
 */
export interface ThreadMark {
  cursor?: string;
  seen: number;
}

/** Items per page of the first walk to the end of a thread. */
const WALK_ITEMS = 100;
/**
 * Items per page near the end: the mark's boundary stays fewer than this many items before the
 * end, so a tick reads those few items (the feeds read each listed item) plus any new ones.
 */
const TAIL_ITEMS = 4;

type ThreadRef = Parameters<ThreadFeeds["items"]>[0];

async function walk(
  threads: ThreadFeeds,
  thread: ThreadRef,
  from: ThreadMark,
  limit: number,
): Promise<ThreadMark> {
  let cursor = from.cursor;
  for (;;) {
    const page = await threads.items(thread, { limit, ...(cursor === undefined ? {} : { cursor }) });
    if (page.cursor === undefined)
      return { ...(cursor === undefined ? {} : { cursor }), seen: page.items.length };
    cursor = page.cursor;
  }
}

/**
 * The thread's mark now, walked from `from`: big pages to the last boundary before the end, then
 * small ones from there, so that the next look reads only the last few items. A thread that never
 * had a post is `{ seen: 0 }`.
 */
export async function threadMark(
  threads: ThreadFeeds,
  thread: ThreadRef,
  from: ThreadMark,
): Promise<ThreadMark> {
  const near = await walk(threads, thread, from, WALK_ITEMS);
  return near.seen < TAIL_ITEMS ? near : walk(threads, thread, { ...near, seen: 0 }, TAIL_ITEMS);
}
