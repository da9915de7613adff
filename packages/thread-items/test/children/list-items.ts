// Prints the ids of a thread's posted items, in the order this process reads them, as JSON.
import { createFsObjectStore } from "@stowage/storage-fs";
import { createThreadFeeds } from "../../src/index.js";

const [root, jobId, alias] = process.argv.slice(2) as [string, string, string];
const feeds = createThreadFeeds({ store: createFsObjectStore({ root }) });
const ids: string[] = [];
let cursor: string | undefined;
do {
  const page = await feeds.items({ jobId, alias }, { limit: 7, ...(cursor === undefined ? {} : { cursor }) });
  ids.push(...page.items.map((item) => item.id!));
  cursor = page.cursor;
} while (cursor !== undefined);
console.log(JSON.stringify(ids));
