import { join } from "node:path";
import { type RecordedWarning, recordingLogger } from "@stowage/core/testing";
import { createFsObjectStore } from "@stowage/storage-fs";
import { runChild, tempDirectory } from "@stowage/test-support";
import { afterAll, describe, expect, it } from "vitest";
import { createThreadFeeds, type ThreadItem } from "../src/index.js";
import { appendedItem } from "./children/appended-items.js";
import { eventually } from "./support/feed-stores.js";
import { connectSocketNotifier, startNotifierHub } from "./support/socket-notifier.js";

const base = await tempDirectory("stowage-thread-feeds-processes-");
const postMany = new URL("./children/post-many.ts", import.meta.url);
const listItems = new URL("./children/list-items.ts", import.meta.url);
const socketPath = join(base, "hub.sock");
const hub = await startNotifierHub(socketPath);
afterAll(() => hub.close());

const idsOf = (items: readonly ThreadItem[]) => items.map((item) => item.id!);
const ofWriter = (ids: readonly string[], writer: string) => ids.filter((id) => id.startsWith(`${writer}-`));

describe("two processes posting to one thread on a shared store and notifier", () => {
  it("reach this process's subscriber live, every item present, in one order every reader agrees on", async () => {
    const root = join(base, "shared");
    const count = 60;
    const notifier = await connectSocketNotifier(socketPath);
    const warnings: RecordedWarning[] = [];
    const feeds = createThreadFeeds({
      store: createFsObjectStore({ root }),
      notifier,
      logger: recordingLogger(warnings).logger,
    });
    const thread = { jobId: "job-shared", alias: "main" };
    const heard: ThreadItem[] = [];
    await feeds.subscribe(thread, (item) => heard.push(item));

    const [a, b] = await Promise.all([
      runChild(postMany, [root, socketPath, "a", String(count)]),
      runChild(postMany, [root, socketPath, "b", String(count)]),
    ]);
    expect([a.stderr, b.stderr]).toEqual(["", ""]);
    expect([a.code, b.code]).toEqual([0, 0]);

    // Live: every item of both children, each writer's in its order, read from the store.
    await eventually(() => heard.length === 2 * count);
    const expected = (writer: string) => Array.from({ length: count }, (_, index) => `${writer}-${index}`);
    for (const writer of ["a", "b"]) expect(ofWriter(idsOf(heard), writer)).toEqual(expected(writer));
    // Item 10 of each writer is 1.2 MB: the notification named it, the subscriber read it fitted.
    expect(heard.find((item) => item.id === "a-10")?.metadata).toMatchObject({ truncated: true });
    expect(heard.find((item) => item.id === "b-3")?.user_id).toBe("writer-b");

    // Stored: the same items; this process and another one list them in the same order.
    const listed: ThreadItem[] = [];
    let cursor: string | undefined;
    do {
      const page = await feeds.items(thread, { limit: 25, ...(cursor === undefined ? {} : { cursor }) });
      listed.push(...page.items);
      cursor = page.cursor;
    } while (cursor !== undefined);
    expect(idsOf(listed).sort()).toEqual([...expected("a"), ...expected("b")].sort());
    for (const writer of ["a", "b"]) expect(ofWriter(idsOf(listed), writer)).toEqual(expected(writer));
    const other = await runChild(listItems, [root, thread.jobId, thread.alias]);
    expect(other.stderr).toBe("");
    expect(JSON.parse(other.stdout)).toEqual(idsOf(listed));

    expect(await feeds.fullItem(thread, "b-10")).toEqual({ ...appendedItem("b", 10), user_id: "writer-b" });
    expect(await feeds.threads()).toEqual({ threads: [{ ...thread, status: "active" }], cursor: undefined });
    expect(warnings).toEqual([]);
    await feeds.close();
    await notifier.close();
  });
});
