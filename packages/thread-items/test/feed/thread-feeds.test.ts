import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import { createMemoryNotifier, type ObjectStore, StowageError } from "@stowage/core";
import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it, vi } from "vitest";
import { DEFAULT_BUDGET_BYTES, measureThreadItem } from "../../src/budget/fit-to-budget.js";
import { textItem, toolCallItem, toolResultItem } from "../../src/builders/build-items.js";
import { createThreadFeeds } from "../../src/feed/thread-feeds.js";
import type { ThreadItem } from "../../src/schema/thread-item-schema.js";
import { eventually, FEED_STORES, keysUnder, recordingLogger } from "../support/feed-stores.js";

const thread = { jobId: "job-1", alias: "main" };
// Written out by hand: the key layout and the topic are part of the package's contract (README).
const INDEX_KEY = "threads/index/job-1/main";
const fullKey = (id: string) => `threads/full/job-1/main/${id}`;
const ITEM_KEY = /^threads\/items\/job-1\/main\/(\d{7})\/(\1\d{9}-[0-9a-f]{8})$/;
const topicOf = (prefix: string, jobId: string, alias: string) =>
  `thread-items:${createHash("sha256").update(prefix).digest("hex").slice(0, 16)}:${jobId}/${alias}`;

const json = (bytes: Uint8Array | null) => JSON.parse(Buffer.from(bytes!).toString("utf8"));

/** Every item of the thread, page by page. */
async function allItems(feeds: ReturnType<typeof createThreadFeeds>, ref = thread, limit = 100) {
  const found: ThreadItem[] = [];
  let cursor: string | undefined;
  do {
    const page = await feeds.items(ref, { limit, ...(cursor === undefined ? {} : { cursor }) });
    found.push(...page.items);
    cursor = page.cursor;
  } while (cursor !== undefined);
  return found;
}

describe.each(FEED_STORES)("thread feeds on the $name", ({ create }) => {
  describe("post, items and fullItem", () => {
    it("stores the full item, posts the fitted item under a time-ordered key, and reads both back", async () => {
      const store = create();
      const feeds = createThreadFeeds({ store });
      const call = toolCallItem({ name: "Bash", invocationId: "tu_1", input: { command: "npm install" } });
      const big = toolResultItem({ invocationId: "tu_1", output: "added 1452 packages\n".repeat(40_000) });

      const postedCall = await feeds.post(thread, call);
      const postedResult = await feeds.post(thread, big);

      expect(postedCall).toEqual({ id: expect.any(String), ...call });
      expect(measureThreadItem(postedResult)).toBeLessThanOrEqual(DEFAULT_BUDGET_BYTES);
      expect(postedResult.metadata).toMatchObject({
        truncated: true,
        truncated_fields: ["tool.output"],
        local_log: "job-1/threads/main/logs/thread.log",
      });
      expect(await feeds.items(thread)).toEqual({ items: [postedCall, postedResult], cursor: undefined });
      expect(await feeds.fullItem(thread, postedResult.id!)).toEqual({ id: postedResult.id, ...big });
      expect(await feeds.fullItem(thread, "never-posted")).toBeNull();

      const keys = await keysUnder(store, "threads/");
      expect(keys.filter((key) => key.startsWith("threads/full/"))).toEqual(
        [fullKey(postedCall.id!), fullKey(postedResult.id!)].sort(),
      );
      expect(keys.filter((key) => key.startsWith("threads/index/"))).toEqual([INDEX_KEY]);
      const itemKeys = keys.filter((key) => key.startsWith("threads/items/"));
      expect(itemKeys).toHaveLength(2);
      for (const key of itemKeys) expect(key).toMatch(ITEM_KEY);
      expect(keys).toHaveLength(5);
      expect(json(await store.get(itemKeys[1]!))).toEqual(postedResult);
      expect(json(await store.get(INDEX_KEY))).toEqual({ jobId: "job-1", alias: "main", status: "active" });
    });

    it("a thread never posted to has no items, no status and no full items", async () => {
      const feeds = createThreadFeeds({ store: create() });
      expect(await feeds.items(thread)).toEqual({ items: [], cursor: undefined });
      expect(await feeds.thread(thread)).toBeNull();
      expect(await feeds.fullItem(thread, "x")).toBeNull();
    });

    it("keeps 40 concurrent posts of one process whole, subscribers hearing them in listing order", async () => {
      const feeds = createThreadFeeds({ store: create() });
      const heard: string[] = [];
      await feeds.subscribe(thread, (item) => heard.push(item.id!));
      const items = Array.from({ length: 40 }, (_, i) =>
        textItem(String(i).repeat(i * 997), { id: `c-${i}` }),
      );
      await Promise.all(items.map((item) => feeds.post(thread, item)));
      const posted = await allItems(feeds, thread, 7);
      expect(posted.map((item) => item.id).sort()).toEqual(items.map((item) => item.id).sort());
      await eventually(() => heard.length === 40);
      expect(heard).toEqual(posted.map((item) => item.id));
    });

    it("refuses a second item under a used id with CONFLICT, keeping the first item's full payload", async () => {
      const store = create();
      const feeds = createThreadFeeds({ store });
      const output = "line of a long build log\n".repeat(20_000); // 500 KB: the posted item is cut
      const first = await feeds.post(thread, toolResultItem({ id: "item-1", invocationId: "tu_1", output }));
      expect(first.metadata).toMatchObject({ truncated: true });

      const refused = await expectStowageError(
        feeds.post(thread, textItem("tiny", { id: "item-1" })),
        "CONFLICT",
        "DUPLICATE_ITEM_ID",
      );
      expect(refused.details).toEqual({ jobId: "job-1", alias: "main", itemId: "item-1" });
      const full = await feeds.fullItem(thread, "item-1");
      expect(full?.metadata).toMatchObject({ type: "tool_result", tool: { output } });
      expect((await feeds.items(thread)).items).toEqual([first]);
      // A refused id leaves no object behind: the listing and the full payloads are as before.
      expect((await keysUnder(store, "threads/full/")).length).toBe(1);
    });

    it("of two posts racing with one id, exactly one is in the thread and the full payload is its", async () => {
      const feeds = createThreadFeeds({ store: create() });
      const results = await Promise.allSettled(
        ["left", "right"].map((text) => feeds.post(thread, textItem(text, { id: "same" }))),
      );
      const won = results.filter((result) => result.status === "fulfilled");
      const lost = results.filter((result) => result.status === "rejected");
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      expect(StowageError.is((lost[0] as PromiseRejectedResult).reason, "CONFLICT")).toBe(true);
      const winner = (won[0] as PromiseFulfilledResult<ThreadItem>).value;
      expect((await feeds.items(thread)).items).toEqual([winner]);
      expect(await feeds.fullItem(thread, "same")).toEqual(winner);
    });

    it("streams the full payload as the JSON bytes stored, or null", async () => {
      const feeds = createThreadFeeds({ store: create() });
      const big = toolResultItem({ id: "big", invocationId: "tu_1", output: "y".repeat(600_000) });
      await feeds.post(thread, big);
      const stream = await feeds.streamFullItem(thread, "big");
      const chunks: Uint8Array[] = [];
      for await (const chunk of stream!) chunks.push(chunk);
      expect(JSON.parse(Buffer.concat(chunks).toString("utf8"))).toEqual(big);
      expect(await feeds.streamFullItem(thread, "never-posted")).toBeNull();
      await expectStowageError(feeds.streamFullItem(thread, "../x"), "INVALID_INPUT");
    });

    it("an aborted signal fails with ABORTED and posts nothing", async () => {
      const store = create();
      const feeds = createThreadFeeds({ store });
      await expectStowageError(feeds.post(thread, textItem("x"), { signal: AbortSignal.abort() }), "ABORTED");
      expect(await keysUnder(store, "")).toEqual([]);
    });

    it("keeps feeds under different prefixes apart on one store and one notifier", async () => {
      const store = create();
      const notifier = createMemoryNotifier();
      const ana = createThreadFeeds({ store, notifier, prefix: "tenants/ana/threads" });
      const bob = createThreadFeeds({ store, notifier, prefix: "tenants/bob/threads" });
      const bobHeard = vi.fn();
      await bob.subscribe(thread, bobHeard);
      await ana.post(thread, textItem("ana's"));
      expect(await bob.items(thread)).toEqual({ items: [], cursor: undefined });
      expect(await bob.threads()).toEqual({ threads: [], cursor: undefined });
      expect(bobHeard).not.toHaveBeenCalled();
      expect((await keysUnder(store, "")).every((key) => key.startsWith("tenants/ana/threads/"))).toBe(true);
    });
  });

  describe("authors", () => {
    it("stamps the author as user_id, replacing the one the client sent, in the thread and the full payload", async () => {
      const feeds = createThreadFeeds({ store: create() });
      const spoofed = { ...textItem("hi", { id: "spoofed" }), user_id: "someone-else" };
      const posted = await feeds.post(thread, spoofed, { author: "worker-1" });
      expect(posted.user_id).toBe("worker-1");
      expect((await feeds.fullItem(thread, "spoofed"))?.user_id).toBe("worker-1");
      await feeds.post(thread, textItem("from ana", { id: "human" }), { author: "ana" });
      const { items } = await feeds.items(thread);
      // A reader can trust user_id to drop its own posts.
      const others = items.filter((item) => item.user_id !== "worker-1");
      expect(others.map((item) => item.id)).toEqual(["human"]);
    });

    it("keeps the item's own user_id when no author is given", async () => {
      const feeds = createThreadFeeds({ store: create() });
      const posted = await feeds.post(thread, { ...textItem("x"), user_id: "embedded-worker" });
      expect(posted.user_id).toBe("embedded-worker");
    });
  });

  describe("failed threads", () => {
    const huge = () => ({ ...textItem("t".repeat(400_000)), id: "huge", extra: "e".repeat(400_000) });

    it("an item over the budget after the drop stage is stored in full, not posted, and fails the thread", async () => {
      const store = create();
      const feeds = createThreadFeeds({ store });
      const heard = vi.fn();
      const statuses: unknown[] = [];
      await feeds.subscribe(thread, heard, { onStatus: (info) => statuses.push(info) });
      const before = await feeds.post(thread, textItem("before", { id: "before" }));
      await eventually(() => heard.mock.calls.length === 1);
      heard.mockClear();

      await expectStowageError(feeds.post(thread, huge()), "TOO_LARGE", "THREAD_ITEM_TOO_LARGE");
      expect(await feeds.fullItem(thread, "huge")).toEqual(huge());
      expect(await feeds.items(thread)).toEqual({ items: [before], cursor: undefined });
      const failed = {
        jobId: "job-1",
        alias: "main",
        status: "failed",
        failure: {
          code: "TOO_LARGE",
          reason: "THREAD_ITEM_TOO_LARGE",
          at: expect.any(String),
          itemId: "huge",
        },
      };
      expect(await feeds.thread(thread)).toEqual(failed);
      expect(Date.parse((await feeds.thread(thread))!.failure!.at)).not.toBeNaN();
      expect(await feeds.threads()).toEqual({ threads: [failed], cursor: undefined });
      expect(json(await store.get(INDEX_KEY))).toEqual(failed);
      await eventually(() => statuses.length === 1);
      expect(statuses).toEqual([failed]);

      const refused = await expectStowageError(
        feeds.post(thread, textItem("after")),
        "CONFLICT",
        "THREAD_FAILED",
      );
      expect(refused.details).toMatchObject({ jobId: "job-1", alias: "main", failure: failed.failure });
      expect(await feeds.items(thread)).toEqual({ items: [before], cursor: undefined });
      expect(heard).not.toHaveBeenCalled();
    });

    it("a thread failed by another process is refused here too, and its first post can fail it", async () => {
      const store = create();
      const here = createThreadFeeds({ store });
      const there = createThreadFeeds({ store });
      await expectStowageError(there.post(thread, huge()), "TOO_LARGE", "THREAD_ITEM_TOO_LARGE");
      await expectStowageError(here.post(thread, textItem("late")), "CONFLICT", "THREAD_FAILED");
      expect((await here.thread(thread))?.status).toBe("failed");
    });

    it("a post on its way when another process fails the thread is taken back and refused", async () => {
      const store = create();
      // Injected timing: this process's append waits until the other process has failed the thread.
      let appending!: () => void;
      const reachedAppend = new Promise<void>((resolve) => {
        appending = resolve;
      });
      let releaseAppend!: () => void;
      const appendMayGo = new Promise<void>((resolve) => {
        releaseAppend = resolve;
      });
      const gated: ObjectStore = { ...store };
      gated.put = async (key, body, options) => {
        if (key.startsWith("threads/items/") && body instanceof Uint8Array && json(body).id === "late") {
          appending();
          await appendMayGo;
        }
        return store.put(key, body, options);
      };
      const notifier = createMemoryNotifier();
      const here = createThreadFeeds({ store: gated, notifier });
      const there = createThreadFeeds({ store, notifier });
      const heard: string[] = [];
      await there.subscribe(thread, (item) => heard.push(item.id!));
      const before = await here.post(thread, textItem("before", { id: "before" }));

      const late = here.post(thread, textItem("late", { id: "late" }));
      await reachedAppend; // "late" has stored its full payload and is appending
      await expectStowageError(there.post(thread, huge()), "TOO_LARGE", "THREAD_ITEM_TOO_LARGE");
      releaseAppend();

      await expectStowageError(late, "CONFLICT", "THREAD_FAILED");
      expect(await here.fullItem(thread, "late")).toBeNull();
      expect(await here.items(thread)).toEqual({ items: [before], cursor: undefined });
      expect(await there.items(thread)).toEqual({ items: [before], cursor: undefined });
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(heard).toEqual(["before"]);
    });

    it("a post to a thread failed elsewhere stores its objects, finds the failure, and leaves nothing", async () => {
      const store = create();
      let puts = 0;
      const counted: ObjectStore = { ...store };
      counted.put = (key, body, options) => {
        puts++;
        return store.put(key, body, options);
      };
      const here = createThreadFeeds({ store: counted });
      const there = createThreadFeeds({ store });
      await here.post(thread, textItem("first", { id: "first" }));
      await expectStowageError(there.post(thread, huge()), "TOO_LARGE");
      await expectStowageError(
        here.post(thread, textItem("late", { id: "late" })),
        "CONFLICT",
        "THREAD_FAILED",
      );
      expect(await here.fullItem(thread, "late")).toBeNull();
      expect((await here.items(thread)).items.map((item) => item.id)).toEqual(["first"]);
      // Now it knows: the next post is refused before anything is written.
      puts = 0;
      await expectStowageError(here.post(thread, textItem("later")), "CONFLICT", "THREAD_FAILED");
      expect(puts).toBe(0);
    });

    it("a second item too large for a failed thread keeps the first failure", async () => {
      const store = create();
      const here = createThreadFeeds({ store });
      const there = createThreadFeeds({ store });
      await expectStowageError(there.post(thread, huge()), "TOO_LARGE");
      await expectStowageError(here.post(thread, { ...huge(), id: "huge-2" }), "CONFLICT", "THREAD_FAILED");
      expect((await here.thread(thread))?.failure?.itemId).toBe("huge");
      expect(await here.fullItem(thread, "huge-2")).toBeNull();
    });

    it("a post stored before the thread failed stays when the other post fails it later", async () => {
      const store = create();
      const here = createThreadFeeds({ store });
      const there = createThreadFeeds({ store });
      const kept = await here.post(thread, textItem("kept", { id: "kept" }));
      await expectStowageError(there.post(thread, huge()), "TOO_LARGE");
      expect((await there.items(thread)).items).toEqual([kept]);
    });

    it("other threads keep working", async () => {
      const feeds = createThreadFeeds({ store: create() });
      await expectStowageError(feeds.post(thread, huge()), "TOO_LARGE");
      const other = { jobId: "job-1", alias: "other" };
      await feeds.post(other, textItem("fine"));
      expect(await feeds.thread(other)).toEqual({ ...other, status: "active" });
    });
  });

  describe("sanitizing", () => {
    const ESC = "\u001b";
    // Sent as a client would, bypassing the builders: every string carries terminal bytes.
    const raw = {
      id: "raw-1",
      content: [{ type: "text", text: `${ESC}[31mraw${ESC}[0m\u0007\u0000 posted\u202e\u{e0041}\u{e0042}` }],
      metadata: {
        type: "tool_call",
        tool: {
          name: "Bash\u0007",
          invocation_id: "tu_1",
          input: { [`com${ESC}[0mmand`]: `ls${ESC}]0;title\u0007 -la\r\n`, args: ["\u009b1mx\u200by"] },
        },
      },
      note: { deep: [`a\u0000b${ESC}Pq#0~${ESC}\\c`] },
    };
    // Written by hand from core's sanitizeText rules (README, "Sanitizing text for models and people").
    const clean = {
      id: "raw-1",
      content: [{ type: "text", text: "raw posted" }],
      metadata: {
        type: "tool_call",
        tool: { name: "Bash", invocation_id: "tu_1", input: { command: "ls -la\n", args: ["xy"] } },
      },
      note: { deep: ["abc"] },
    };

    it("stores, lists, streams and announces every string of a posted item sanitized, keys included", async () => {
      const store = create();
      const feeds = createThreadFeeds({ store });
      const heard: ThreadItem[] = [];
      await feeds.subscribe(thread, (item) => heard.push(item));
      const posted = await feeds.post(thread, raw as ThreadItem);
      expect(posted).toEqual(clean);
      expect((await feeds.items(thread)).items).toEqual([clean]);
      expect(await feeds.fullItem(thread, "raw-1")).toEqual(clean);
      await eventually(() => heard.length === 1);
      expect(heard).toEqual([clean]);
      for (const key of await keysUnder(store, "threads/")) {
        const text = Buffer.from((await store.get(key))!).toString("utf8");
        expect(text).not.toMatch(/\\u001b|\\u0007|\\u0000|\u202e|\u{e0041}/u);
      }
    });

    it("sanitizes thinking text and the text an over-budget item is cut from", async () => {
      const feeds = createThreadFeeds({ store: create() });
      const thinking = await feeds.post(thread, {
        content: [{ type: "text", text: "[thinking] plan" }],
        metadata: { type: "thinking", text: `plan${ESC}[2K\u0007 carefully\u2066`, full_text_length: 16 },
      } as ThreadItem);
      expect(thinking.metadata).toMatchObject({ text: "plan carefully" });
      const long = await feeds.post(thread, {
        content: [{ type: "text", text: `${ESC}[1m${"z".repeat(400_000)}${ESC}[0m\u0000end` }],
      } as ThreadItem);
      expect(long.content[0]!.text).toMatch(/^z{4096}…\[truncated \d+ bytes; see [^\]]+\]…z+end$/);
    });

    it("an item a client cannot serialize is INVALID_INPUT and stores nothing", async () => {
      const store = create();
      const feeds = createThreadFeeds({ store });
      const deep: Record<string, unknown> = {};
      let at = deep;
      for (let depth = 0; depth < 100_000; depth++) at = at.next = {} as Record<string, unknown>;
      await expectStowageError(
        feeds.post(thread, { ...textItem("x"), extra: deep } as ThreadItem),
        "INVALID_INPUT",
      );
      expect(await keysUnder(store, "")).toEqual([]);
    });
  });

  describe("subscribe", () => {
    it("tells each thread's listeners about its own posts until they unsubscribe", async () => {
      const feeds = createThreadFeeds({ store: create() });
      const main: ThreadItem[] = [];
      const other: ThreadItem[] = [];
      const unsubscribe = await feeds.subscribe(thread, (item) => main.push(item));
      await feeds.subscribe({ jobId: "job-1", alias: "other" }, (item) => other.push(item));

      const first = await feeds.post(thread, textItem("one", { id: "one" }));
      await eventually(() => main.length === 1);
      await unsubscribe();
      await unsubscribe();
      await feeds.post(thread, textItem("two", { id: "two" }));
      await new Promise((resolve) => setTimeout(resolve, 50));

      expect(main).toEqual([first]);
      expect(other).toEqual([]);
    });

    it("delivers an item posted through another feeds object sharing the store and notifier, read from the store", async () => {
      const store = create();
      const notifier = createMemoryNotifier();
      const reader = createThreadFeeds({ store, notifier });
      const writer = createThreadFeeds({ store, notifier });
      const heard: ThreadItem[] = [];
      await reader.subscribe(thread, (item) => heard.push(item));
      const big = toolResultItem({ id: "big", invocationId: "tu_1", output: "x".repeat(1_000_000) });
      const posted = await writer.post(thread, big);
      await eventually(() => heard.length === 1);
      expect(heard).toEqual([posted]);
      expect(measureThreadItem(heard[0])).toBeLessThanOrEqual(DEFAULT_BUDGET_BYTES);
    });

    it("a listener that throws is reported, and the item is still posted and delivered to the others", async () => {
      const { logger, warnings } = recordingLogger();
      const feeds = createThreadFeeds({ store: create(), logger });
      const heard = vi.fn();
      await feeds.subscribe(thread, () => {
        throw new Error("listener bug");
      });
      await feeds.subscribe(thread, heard);
      const posted = await feeds.post(thread, textItem("x", { id: "x" }));
      await eventually(() => heard.mock.calls.length === 1);
      expect(heard).toHaveBeenCalledWith(posted);
      expect((await feeds.items(thread)).items).toEqual([posted]);
      expect(warnings).toEqual([
        expect.objectContaining({ details: expect.objectContaining({ jobId: "job-1", itemId: "x" }) }),
      ]);
    });

    it("a notifier that cannot publish leaves the item posted, with a warning", async () => {
      const { logger, warnings } = recordingLogger();
      const notifier = createMemoryNotifier();
      notifier.publish = async () => {
        throw new StowageError("UNAVAILABLE", "notifier down");
      };
      const feeds = createThreadFeeds({ store: create(), notifier, logger });
      const posted = await feeds.post(thread, textItem("kept"));
      expect((await feeds.items(thread)).items).toEqual([posted]);
      expect(warnings).toHaveLength(1);
    });

    it("ignores notifications that name no posted item, with a warning", async () => {
      const { logger, warnings } = recordingLogger();
      const notifier = createMemoryNotifier();
      const feeds = createThreadFeeds({ store: create(), notifier, logger });
      const heard = vi.fn();
      await feeds.subscribe(thread, heard);
      const topic = topicOf("threads", "job-1", "main");
      for (const message of [
        "../../index/job-1/main",
        "1/../../x",
        "0000000000000000-ZZZZZZZZ",
        "x".repeat(3000),
      ]) {
        await notifier.publish(topic, message);
      }
      // A well-formed name of an item that does not exist: nothing to deliver, nothing to say.
      await notifier.publish(topic, "1700000000000000-0123abcd");
      const posted = await feeds.post(thread, textItem("real"));
      await eventually(() => heard.mock.calls.length === 1);
      expect(heard.mock.calls).toEqual([[posted]]);
      expect(warnings).toHaveLength(4);
    });

    it("close stops delivery", async () => {
      const store = create();
      const notifier = createMemoryNotifier();
      const reader = createThreadFeeds({ store, notifier });
      const heard = vi.fn();
      await reader.subscribe(thread, heard);
      await reader.close();
      await createThreadFeeds({ store, notifier }).post(thread, textItem("after close"));
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(heard).not.toHaveBeenCalled();
    });
  });

  describe("threads", () => {
    it("lists every thread posted to, in key order, page by page, or one job's", async () => {
      const feeds = createThreadFeeds({ store: create() });
      expect(await feeds.threads()).toEqual({ threads: [], cursor: undefined });
      for (const [jobId, alias] of [
        ["job-b", "main"],
        ["job-a", "z"],
        ["job-a", "b"],
        ["job-a", "B"],
      ] as const) {
        await feeds.post({ jobId, alias }, textItem(`${jobId}/${alias}`));
      }
      const active = (jobId: string, alias: string) => ({ jobId, alias, status: "active" });
      const first = await feeds.threads({ limit: 3 });
      expect(first.threads).toEqual([active("job-a", "B"), active("job-a", "b"), active("job-a", "z")]);
      expect(first.cursor).toEqual(expect.any(String));
      expect(await feeds.threads({ limit: 3, cursor: first.cursor! })).toEqual({
        threads: [active("job-b", "main")],
        cursor: undefined,
      });
      expect(await feeds.threads({ jobId: "job-b" })).toEqual({
        threads: [active("job-b", "main")],
        cursor: undefined,
      });
      expect(await feeds.threads({ jobId: "job-c" })).toEqual({ threads: [], cursor: undefined });
    });

    it("leaves out objects under the index that name no thread", async () => {
      const store = create();
      const feeds = createThreadFeeds({ store });
      await feeds.post(thread, textItem("posted"));
      await store.put("threads/index/job-2/main/extra", Buffer.from("{}"));
      await store.put("threads/index/.hidden/main", Buffer.from("{}"));
      await store.put("threads/index/job-3", Buffer.from("{}"));
      expect((await feeds.threads()).threads).toEqual([{ ...thread, status: "active" }]);
    });
  });

  describe("damaged objects", () => {
    it("skips and reports a torn item and objects that are not posted items, keeping the rest", async () => {
      const store = create();
      const { logger, warnings } = recordingLogger();
      const feeds = createThreadFeeds({ store, logger });
      const before = await feeds.post(thread, textItem("before", { id: "before" }));
      const [beforeKey] = (await keysUnder(store, "threads/items/")) as [string];
      const bucket = beforeKey.split("/")[4]!;
      // A torn write, a foreign JSON value, and a key outside the layout, all inside the thread.
      await store.put(
        `threads/items/job-1/main/${bucket}/${bucket}999999998-00000000`,
        Buffer.from('{"id":"torn","content":[{"type":"te'),
      );
      await store.put(
        `threads/items/job-1/main/${bucket}/${bucket}999999999-00000000`,
        Buffer.from('["an array"]'),
      );
      await store.put(`threads/items/job-1/main/${bucket}/stray`, Buffer.from("{}"));
      const after = await feeds.post(thread, textItem("after", { id: "after" }));

      expect(await allItems(feeds, thread, 2)).toEqual([before, after]);
      expect(warnings.map((warning) => warning.details?.key)).toEqual([
        `threads/items/job-1/main/${bucket}/${bucket}999999998-00000000`,
        `threads/items/job-1/main/${bucket}/${bucket}999999999-00000000`,
        `threads/items/job-1/main/${bucket}/stray`,
      ]);
    });

    it("reads an unreadable thread record as active, with a warning, and the thread keeps working", async () => {
      const store = create();
      const { logger, warnings } = recordingLogger();
      const feeds = createThreadFeeds({ store, logger });
      await feeds.post(thread, textItem("one"));
      await store.put(INDEX_KEY, Buffer.from('{"status":"fai'));
      expect(await feeds.thread(thread)).toEqual({ ...thread, status: "active" });
      await feeds.post(thread, textItem("two"));
      expect((await feeds.items(thread)).items).toHaveLength(2);
      expect(warnings.length).toBeGreaterThanOrEqual(2);
      expect(warnings.every((warning) => warning.details?.key === INDEX_KEY)).toBe(true);
    });

    it("an unreadable full payload is INTEGRITY, not a crash", async () => {
      const store = create();
      const feeds = createThreadFeeds({ store });
      await feeds.post(thread, textItem("x", { id: "x" }));
      await store.put(fullKey("x"), Buffer.from("{not json"));
      await expectStowageError(feeds.fullItem(thread, "x"), "INTEGRITY");
    });
  });
});

describe("stores that report errors", () => {
  it("a store failure on the append surfaces with its code, takes the full payload back, and the id can be posted again", async () => {
    const store: ObjectStore = { ...FEED_STORES[0]!.create() };
    const put = store.put.bind(store);
    const puts: string[] = [];
    let full = true;
    store.put = async (key, body, options) => {
      puts.push(key.split("/")[1]!);
      if (key.startsWith("threads/items/") && full) throw new StowageError("STORAGE_FULL", "disk full");
      return put(key, body, options);
    };
    const feeds = createThreadFeeds({ store });
    await expectStowageError(feeds.post(thread, textItem("x", { id: "x" })), "STORAGE_FULL");
    // The full payload went first, as the design document requires, and was taken back.
    expect(puts).toEqual(["full", "items"]);
    expect(await feeds.items(thread)).toEqual({ items: [], cursor: undefined });
    expect(await feeds.fullItem(thread, "x")).toBeNull();

    full = false;
    const posted = await feeds.post(thread, textItem("x", { id: "x" }));
    expect((await feeds.items(thread)).items).toEqual([posted]);
  });

  it("a thread record that cannot be read after the append takes the post back and fails it", async () => {
    const store: ObjectStore = { ...FEED_STORES[0]!.create() };
    const get = store.get.bind(store);
    store.get = async (key, options) => {
      if (key.startsWith("threads/index/")) throw new StowageError("UNAVAILABLE", "database restarting");
      return get(key, options);
    };
    const feeds = createThreadFeeds({ store });
    await expectStowageError(feeds.post(thread, textItem("x", { id: "x" })), "UNAVAILABLE");
    expect(await keysUnder(store, "threads/")).toEqual([]);
  });
});
