import { appendFile, mkdtemp, open, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { BenchCase } from "@stowage/bench-kit";
import { ensureDirectory } from "@stowage/core/fs";
import { createFsObjectStore } from "@stowage/storage-fs";
import {
  createThreadFeeds,
  createThreadLog,
  type ThreadItem,
  textItem,
  toolCallItem,
  toolResultItem,
} from "@stowage/thread-items";
import { MAX_FEED_PAGE_LIMIT } from "../src/feed/listing-page.js";

const DURABLE_POSTS = 100;
const ITEMS = 10_000;

function sampleItem(index: number): ThreadItem {
  if (index % 3 === 0)
    return toolCallItem({
      id: `i-${index}`,
      name: "Bash",
      invocationId: `tu_${index}`,
      input: { command: `npm test -- ${index}` },
    });
  if (index % 3 === 1)
    return toolResultItem({
      id: `i-${index}`,
      invocationId: `tu_${index - 1}`,
      output: `ok ${index}\n`.repeat(40),
    });
  return textItem(`Step ${index}: looked at the failing test and fixed the import.`, { id: `i-${index}` });
}

const SAMPLE_LINES = Array.from({ length: ITEMS }, (_, index) => `${JSON.stringify(sampleItem(index))}\n`);

/**
 * The posted-item feed before it moved onto an ObjectStore: the thread log's `prepareForPosting`
 * (full item appended, fsync'd), then an open/append/fsync/close of the fitted line.
 */
async function localFeedPost(root: string, alias: string, item: ThreadItem): Promise<void> {
  const log = createThreadLog({ root, jobId: "bench", alias });
  const posted = await log.prepareForPosting(item);
  const path = join(root, "jobs", "bench", "threads", alias, "posted.jsonl");
  await ensureDirectory(dirname(path));
  const handle = await open(path, "a");
  try {
    await handle.write(`${JSON.stringify(posted)}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Durable posting: `ThreadFeeds.post` on an fsync'd fs store vs the former local feed, both fsync'd. */
export async function durablePostCase(): Promise<BenchCase> {
  const root = await mkdtemp(join(tmpdir(), "stowage-bench-feed-durable-"));
  const feeds = createThreadFeeds({ store: createFsObjectStore({ root: join(root, "store") }) });
  let run = 0;
  return {
    name: `ThreadFeeds.post: ${DURABLE_POSTS} items one after another on an fsync'd fs store (full payload + fitted item, each a file with its directory fsync'd) vs the former local feed (thread-log line + posted.jsonl line, each fsync'd)`,
    // Each storage-fs put is a file fsync plus a directory fsync: four syncs per item against two.
    target: { kind: "time", max: 2.5 },
    units: { count: DURABLE_POSTS, label: "ops" },
    ours: async () => {
      const thread = { jobId: "bench", alias: `ours-${run++}` };
      for (let index = 0; index < DURABLE_POSTS; index++) await feeds.post(thread, sampleItem(index));
    },
    baseline: async () => {
      const alias = `local-${run++}`;
      for (let index = 0; index < DURABLE_POSTS; index++) await localFeedPost(root, alias, sampleItem(index));
    },
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}

/**
 * Posting 10,000 items on an fs store without fsync vs appending the same JSON lines to one file.
 * Ours, per item: validate, read the thread's record, write the full payload (temp file + rename),
 * fit it to the budget, write the fitted item create-only (temp file + link), publish its name on
 * the memory notifier. Baseline, per item: `appendFile` of the item's JSON line (open, write, close).
 */
export async function bulkPostCase(): Promise<BenchCase> {
  const root = await mkdtemp(join(tmpdir(), "stowage-bench-feed-post-"));
  const feeds = createThreadFeeds({
    store: createFsObjectStore({ root: join(root, "store"), fsync: false }),
  });
  let run = 0;
  return {
    name: `ThreadFeeds.post: ${ITEMS.toLocaleString("en-US")} items on an fs store, no fsync (3 objects touched per item) vs appendFile of the same JSON lines to one file`,
    // A regression guard, not parity: three objects and two file creations per item against one append.
    target: { kind: "time", max: 15 },
    units: { count: ITEMS, label: "ops" },
    rounds: 3,
    ours: async () => {
      const thread = { jobId: "bench", alias: `ours-${run++}` };
      for (let index = 0; index < ITEMS; index++) await feeds.post(thread, sampleItem(index));
    },
    baseline: async () => {
      const path = join(root, `lines-${run++}.jsonl`);
      for (const line of SAMPLE_LINES) await appendFile(path, line);
    },
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}

/**
 * Reading 10,000 posted items back. Ours: `ThreadFeeds.items` page by page (list the page's keys,
 * read each object, JSON.parse and validate it against the schema). Baseline: `readFile` of the
 * JSON-lines file, split, JSON.parse of every line, no validation.
 */
export async function readBackCase(): Promise<BenchCase> {
  const root = await mkdtemp(join(tmpdir(), "stowage-bench-feed-read-"));
  const feeds = createThreadFeeds({
    store: createFsObjectStore({ root: join(root, "store"), fsync: false }),
  });
  const thread = { jobId: "bench", alias: "read" };
  for (let index = 0; index < ITEMS; index++) await feeds.post(thread, sampleItem(index));
  const path = join(root, "lines.jsonl");
  for (const line of SAMPLE_LINES) await appendFile(path, line);
  return {
    name: `ThreadFeeds.items: ${ITEMS.toLocaleString("en-US")} items from an fs store in pages of ${MAX_FEED_PAGE_LIMIT} (one file each, schema-checked) vs readFile + split + JSON.parse of the same JSON lines`,
    // A regression guard, not parity: a listing, a stat and a file read per item against one read.
    target: { kind: "time", max: 60 },
    units: { count: ITEMS, label: "ops" },
    ours: async () => {
      let count = 0;
      let cursor: string | undefined;
      do {
        const page = await feeds.items(thread, { limit: MAX_FEED_PAGE_LIMIT, ...(cursor ? { cursor } : {}) });
        count += page.items.length;
        cursor = page.cursor;
      } while (cursor !== undefined);
      if (count !== ITEMS) throw new Error(`read ${count} of ${ITEMS} items`);
    },
    baseline: async () => {
      const items = (await readFile(path, "utf8"))
        .split("\n")
        .filter((line) => line.length > 0)
        .map((line) => JSON.parse(line));
      if (items.length !== ITEMS) throw new Error("items lost");
    },
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}
