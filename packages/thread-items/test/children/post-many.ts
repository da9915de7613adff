// Posts `count` items to one thread on a shared fs store, announcing them through the socket
// notifier hub, alongside a sibling process doing the same.
import { createFsObjectStore } from "@stowage/storage-fs";
import { createThreadFeeds } from "../../src/index.js";
import { connectSocketNotifier } from "../support/socket-notifier.js";
import { appendedItem } from "./appended-items.js";

const [root, socketPath, writer, count] = process.argv.slice(2) as [string, string, string, string];
const notifier = await connectSocketNotifier(socketPath);
const feeds = createThreadFeeds({ store: createFsObjectStore({ root }), notifier });
const thread = { jobId: "job-shared", alias: "main" };
for (let index = 0; index < Number(count); index++) {
  await feeds.post(thread, appendedItem(writer, index), { author: `writer-${writer}` });
}
await feeds.close();
await notifier.close();
console.log("done");
