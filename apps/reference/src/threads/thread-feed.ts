import { EventEmitter } from "node:events";
import { open, readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { errnoOf, fromSystemError } from "@stowage/core";
import { ensureDirectory } from "@stowage/core/fs";
import { createThreadLog, parseThreadItem, type ThreadItem, type ThreadLog } from "@stowage/thread-items";

/** File beside a thread's log holding the items as posted (fitted to the budget), one per line. */
export const POSTED_FILE_NAME = "posted.jsonl";

export interface ThreadRef {
  jobId: string;
  alias: string;
}

/**
 * The thread service of the reference app: what a chat thread would hold. Posting logs the full
 * item first (thread-items' ThreadLog), then keeps the budget-fitted item and tells subscribers.
 */
export function createThreadFeeds(dataDir: string) {
  const events = new EventEmitter();
  events.setMaxListeners(0);
  // Appends to one feed are serialized so that lines never interleave within this process.
  const queues = new Map<string, Promise<unknown>>();

  const logFor = ({ jobId, alias }: ThreadRef): ThreadLog => createThreadLog({ root: dataDir, jobId, alias });
  const feedPath = (log: ThreadLog) => join(log.path, "..", "..", POSTED_FILE_NAME);
  const topic = ({ jobId, alias }: ThreadRef) => `${jobId}/${alias}`;

  async function append(path: string, line: string): Promise<void> {
    await ensureDirectory(join(path, ".."));
    const handle = await open(path, "a");
    try {
      await handle.write(line);
      await handle.sync();
    } finally {
      await handle.close();
    }
  }

  return {
    /** Logs `item` in full, fits it to the budget, keeps and announces the fitted item. */
    async post(thread: ThreadRef, item: ThreadItem): Promise<ThreadItem> {
      const log = logFor(thread);
      const posted = await log.prepareForPosting(item);
      const path = feedPath(log);
      const previous = queues.get(path) ?? Promise.resolve();
      const write = previous.then(() => append(path, `${JSON.stringify(posted)}\n`));
      queues.set(
        path,
        write.catch(() => {}),
      );
      try {
        await write;
      } catch (err) {
        throw fromSystemError(err, `post to thread ${topic(thread)}`);
      }
      events.emit(topic(thread), posted);
      return posted;
    },

    /** The posted items of a thread, oldest first; empty when the thread has none. */
    async items(thread: ThreadRef): Promise<ThreadItem[]> {
      let text: string;
      try {
        text = await readFile(feedPath(logFor(thread)), "utf8");
      } catch (err) {
        if (errnoOf(err) === "ENOENT") return [];
        throw fromSystemError(err, `read thread ${topic(thread)}`);
      }
      return text
        .split("\n")
        .filter((line) => line.length > 0)
        .map((line) => parseThreadItem(JSON.parse(line)));
    },

    /** The full, untruncated payload of one item, from the thread log. */
    fullItem(thread: ThreadRef, itemId: string): Promise<ThreadItem | null> {
      return logFor(thread).read(itemId);
    },

    /** Calls `listener` with every item posted to the thread from now on; returns the unsubscribe. */
    subscribe(thread: ThreadRef, listener: (item: ThreadItem) => void): () => void {
      logFor(thread); // validates the ids
      events.on(topic(thread), listener);
      return () => events.off(topic(thread), listener);
    },

    /** Every thread that has posted items. */
    async threads(): Promise<ThreadRef[]> {
      const found: ThreadRef[] = [];
      const jobs = await readdir(join(dataDir, "jobs")).catch(() => [] as string[]);
      for (const jobId of jobs.sort()) {
        const aliases = await readdir(join(dataDir, "jobs", jobId, "threads")).catch(() => [] as string[]);
        for (const alias of aliases.sort()) {
          const exists = await stat(join(dataDir, "jobs", jobId, "threads", alias, POSTED_FILE_NAME)).then(
            (info) => info.isFile(),
            () => false,
          );
          if (exists) found.push({ jobId, alias });
        }
      }
      return found;
    },
  };
}

export type ThreadFeeds = ReturnType<typeof createThreadFeeds>;
