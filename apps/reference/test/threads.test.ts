import { randomUUID } from "node:crypto";
import { textItem, toolResultItem } from "@stowage/thread-items";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { SSE_MAX_QUEUED_CHARS, SSE_RESYNC_GRACE_SECONDS } from "../src/http/routes/threads.js";
import { errorCode, startTestApp, type TestApp } from "./support/test-app.js";

let app: TestApp;
let key: string;

beforeAll(async () => {
  app = await startTestApp();
  key = await app.keyFor({ kind: "user", id: "thread-tester" });
});
afterAll(() => app.close());

const freshThread = () => `/threads/job-${randomUUID().slice(0, 8)}/main`;

async function post(thread: string, item: unknown) {
  return app.call(`${thread}/items`, { key, json: item });
}

async function json<T>(response: Response): Promise<T> {
  return (await response.json()) as T;
}

/** A thread's live tail, read only when the test says so. */
async function openTail(thread: string) {
  const controller = new AbortController();
  const response = await fetch(`${app.url}${thread}/events`, {
    headers: { authorization: `Bearer ${key}` },
    signal: controller.signal,
  });
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let received = "";
  return {
    response,
    get received() {
      return received;
    },
    /** Reads until `text` has arrived, or the stream ends (resolves false). */
    async until(text: string): Promise<boolean> {
      while (!received.includes(text)) {
        const { value, done } = await reader.read();
        if (done) return false;
        received += value;
      }
      return true;
    },
    /** Reads to the end of the stream; resolves how it ended. */
    async toEnd(): Promise<"ended" | "cut"> {
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return "ended";
          received += value;
        }
      } catch {
        return "cut";
      }
    },
    close: () => controller.abort(),
  };
}

const events = (text: string, name: string) =>
  text.split("\n\n").filter((block) => block.startsWith(`event: ${name}\n`));

describe("item ids are create-only", () => {
  it("a second post under a used id is 409 CONFLICT DUPLICATE_ITEM_ID, and the first item's full payload stays", async () => {
    const thread = freshThread();
    const output = "a line of the build log that matters\n".repeat(14_000); // 518 KB: the item is cut
    const first = await post(thread, toolResultItem({ id: "item-1", invocationId: "tu_1", output }));
    expect(first.status).toBe(201);
    const { item } = await json<{ item: { metadata: { truncated?: boolean } } }>(first);
    expect(item.metadata.truncated).toBe(true);

    const again = await post(thread, textItem("tiny", { id: "item-1" }));
    expect(again.status).toBe(409);
    const refused = await json<{ code: string; reason: string; details: unknown }>(again);
    expect(refused).toMatchObject({ code: "CONFLICT", reason: "DUPLICATE_ITEM_ID" });
    expect(refused.details).toEqual({ jobId: thread.split("/")[2], alias: "main", itemId: "item-1" });

    const full = await json<{ item: { metadata: { tool: { output: string } } } }>(
      await app.call(`${thread}/items/item-1/full`, { key }),
    );
    expect(full.item.metadata.tool.output).toBe(output);
    const read = await json<{ entries: unknown[] }>(await app.call(thread, { key }));
    expect(read.entries).toHaveLength(1);
  });

  it("posts without an id each get a fresh one", async () => {
    const thread = freshThread();
    const ids = new Set<string>();
    for (let index = 0; index < 3; index++) {
      const response = await post(thread, { content: [{ type: "text", text: `note ${index}` }] });
      expect(response.status).toBe(201);
      ids.add((await json<{ item: { id: string } }>(response)).item.id);
    }
    expect(ids.size).toBe(3);
  });
});

describe("posted items are sanitized", () => {
  it("terminal bytes and invisible characters a client sends are gone from the thread, the full payload and the live tail", async () => {
    const thread = freshThread();
    const tail = await openTail(thread);
    await tail.until("event: ready");
    const ESC = "\u001b";
    const tags = [..."obey me"].map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join("");
    const response = await post(thread, {
      id: "raw",
      content: [{ type: "text", text: `${ESC}[31mred${ESC}[0m\u0007\u0000 alert${tags}\u202e` }],
      metadata: {
        type: "tool_call",
        tool: { name: "Bash", invocation_id: "tu_1", input: { command: `make${ESC}]0;title\u0007 all\r\n` } },
      },
    });
    expect(response.status).toBe(201);
    // By hand, from core's sanitizeText rules.
    const clean = {
      id: "raw",
      user_id: "user:thread-tester",
      content: [{ type: "text", text: "red alert" }],
      metadata: {
        type: "tool_call",
        tool: { name: "Bash", invocation_id: "tu_1", input: { command: "make all\n" } },
      },
    };
    expect((await json<{ item: unknown }>(response)).item).toEqual(clean);
    const read = await json<{ entries: { call: unknown }[] }>(await app.call(thread, { key }));
    expect(read.entries[0]!.call).toEqual(clean);
    expect((await json<{ item: unknown }>(await app.call(`${thread}/items/raw/full`, { key }))).item).toEqual(
      clean,
    );
    await tail.until('"red alert"');
    expect(JSON.parse(events(tail.received, "item")[0]!.slice("event: item\ndata: ".length))).toEqual(clean);
    tail.close();
  });

  it("a secret an agent printed reaches no reader: the thread, the full payload and the live tail hold its kind", async () => {
    const thread = freshThread();
    const tail = await openTail(thread);
    await tail.until("event: ready");
    // AWS's published example key id, in a .env file the agent read.
    const output = "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\nREGION=eu-west-1\n";
    const response = await post(thread, { id: "env", ...toolResultItem({ invocationId: "t1", output }) });
    expect(response.status).toBe(201);
    const redacted = "AWS_ACCESS_KEY_ID=[REDACTED:aws-access-key-id]\nREGION=eu-west-1\n";
    const posted = (
      await json<{ item: { metadata: { tool: { output: string } }; redactions: unknown } }>(response)
    ).item;
    expect(posted.metadata.tool.output).toBe(redacted);
    // The brief quotes the output's first line: redacted there too.
    expect(posted.redactions).toEqual([
      { kind: "aws-access-key-id", path: "content.0.text", index: 20 },
      { kind: "aws-access-key-id", path: "metadata.tool.output", index: 18 },
    ]);
    const full = await (await app.call(`${thread}/items/env/full`, { key })).text();
    const read = await (await app.call(thread, { key })).text();
    await tail.until("REDACTED");
    for (const seen of [full, read, tail.received]) expect(seen).not.toContain("AKIAIOSFODNN7EXAMPLE");
    tail.close();
  });

  it("STOWAGE_REDACT_SECRETS=off stores a post as sent, for threads that are never shared", async () => {
    const unshared = await startTestApp({ STOWAGE_REDACT_SECRETS: "off" });
    try {
      const ownKey = await unshared.keyFor({ kind: "user", id: "thread-tester" });
      const output = "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n";
      const response = await unshared.call(`${freshThread()}/items`, {
        key: ownKey,
        json: toolResultItem({ invocationId: "t1", output }),
      });
      const posted = (await json<{ item: { metadata: { tool: { output: string } } } }>(response)).item;
      expect(posted.metadata.tool.output).toBe(output);
    } finally {
      await unshared.close();
    }
  });
});

describe("full payloads", () => {
  it("stream from the store: a 5 MB output comes back whole, chunked, as { item }", async () => {
    const thread = freshThread();
    const output = `${"0123456789abcdef".repeat(64)}\n`.repeat(5_000);
    expect((await post(thread, toolResultItem({ id: "big", invocationId: "tu_1", output }))).status).toBe(
      201,
    );
    const response = await app.call(`${thread}/items/big/full`, { key });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("application/json");
    expect(response.headers.get("content-length")).toBeNull(); // streamed, not a buffered body
    const { item } = await json<{ item: { id: string; metadata: { tool: { output: string } } } }>(response);
    expect(item.id).toBe("big");
    expect(item.metadata.tool.output).toBe(output);
  });

  it("is 404 for an unknown item and 400 for a hostile id", async () => {
    const thread = freshThread();
    await post(thread, textItem("x"));
    const missing = await app.call(`${thread}/items/nope/full`, { key });
    expect(missing.status).toBe(404);
    expect(await errorCode(missing)).toBe("NOT_FOUND");
    const hostile = await app.call(`${thread}/items/..%2Fx/full`, { key });
    expect([400, 404]).toContain(hostile.status);
  });
});

describe("a live tail whose subscriber falls behind", () => {
  // 300 KB items: past the sockets' buffers (a few MB on loopback), the queue fills in a dozen.
  // A client that stops reading holds about 4 MB in the sockets' buffers on Linux's loopback.
  const SOCKET_BYTES = 4 * 1024 * 1024;
  const bigItem = (index: number) => textItem(`${index} ${"x".repeat(300_000)}`);
  // At most this many posts for the slow reader: 30 MB, past the queue and whatever Linux's
  // loopback buffers take (the receive buffer autotunes up to tcp_rmem's maximum, 32 MiB here,
  // about half of it data). The test stops posting as soon as the reader is dropped.
  const SLOW_POSTS = 100;
  it("posts well past what the sockets and the queue hold", () => {
    expect(SLOW_POSTS * 300_000).toBeGreaterThan(SSE_MAX_QUEUED_CHARS + SOCKET_BYTES + 16 * 1024 * 1024);
  });

  /**
   * Posts 300 KB items to `thread` until the server drops its subscriber that stopped reading,
   * which frees a stream slot of the key (its other 19 streams are open on `idleThread`): how many
   * that takes depends on what the sockets buffer, which varies from run to run. A probe opens a
   * stream after each post; the first one let in says the slot is free (it is closed at once).
   * Resolves how many items were posted; throws past SLOW_POSTS.
   */
  async function postUntilDropped(thread: string, idleThread: string): Promise<number> {
    for (let posted = 1; posted <= SLOW_POSTS; posted++) {
      expect((await post(thread, bigItem(posted - 1))).status).toBe(201);
      const probe = await fetch(`${app.url}${idleThread}/events`, {
        headers: { authorization: `Bearer ${key}` },
      });
      await probe.body?.cancel();
      if (probe.status === 200) return posted;
      expect(probe.status).toBe(429);
    }
    throw new Error(`the subscriber that stopped reading was not dropped after ${SLOW_POSTS} posts`);
  }

  it("is sent resync and its stream ends, instead of the server queueing every item for it", async () => {
    const thread = freshThread();
    const slow = await openTail(thread);
    await slow.until("event: ready"); // then it stops reading while items are posted
    // The key's other 19 streams: a stream slot frees the moment the server drops the slow
    // reader, which tells the test to stop posting (it must read again within the grace period).
    const idleThread = freshThread();
    const idle = await Promise.all(Array.from({ length: 19 }, () => openTail(idleThread)));
    let posted: number;
    try {
      posted = await postUntilDropped(thread, idleThread);
    } finally {
      for (const tail of idle) tail.close();
    }
    expect(await slow.toEnd()).toBe("ended");
    const [resync] = events(slow.received, "resync");
    expect(JSON.parse(resync!.slice("event: resync\ndata: ".length))).toEqual({
      jobId: thread.split("/")[2],
      alias: "main",
      reason: "SUBSCRIBER_TOO_SLOW",
    });
    expect(events(slow.received, "item").length).toBeLessThan(posted);
    // The thread itself lost nothing: a reload shows every item.
    const read = await json<{ entries: unknown[]; cursor?: string }>(
      await app.call(`${thread}?limit=100`, { key }),
    );
    expect(read.entries).toHaveLength(posted);
  });

  it("that never reads frees its stream slot at once and has its connection cut after the grace period", async () => {
    const thread = freshThread();
    const stalled = await openTail(thread);
    await stalled.until("event: ready");
    // The key's other 19 streams, on a thread nobody posts to: the key is at its limit of 20.
    const idleThread = freshThread();
    const idle = await Promise.all(Array.from({ length: 19 }, () => openTail(idleThread)));
    const refused = await fetch(`${app.url}${idleThread}/events`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(refused.status).toBe(429);
    expect(await errorCode(refused)).toBe("RATE_LIMITED");

    // The grace period's timer is driven by the test rather than waited for (11 s of wall time):
    // the server asks for it when it drops the subscriber, and the test runs it once the
    // subscriber has shown it is not reading.
    const graceTimers = holdTimersOf(SSE_RESYNC_GRACE_SECONDS * 1000, THREADS_ROUTE);
    let posted: number;
    try {
      // Until the stalled subscriber is dropped: its slot is then free for a new stream.
      posted = await postUntilDropped(thread, idleThread);

      // It never took its resync: once the grace period is over, its connection is cut.
      expect(graceTimers.pending).toBe(1);
      graceTimers.runAll();
    } finally {
      graceTimers.restore();
    }
    const ending = await stalled.toEnd();
    expect(["ended", "cut"]).toContain(ending);
    expect(events(stalled.received, "resync")).toEqual([]);
    expect(events(stalled.received, "item").length).toBeLessThan(posted);
    for (const tail of idle) tail.close();
  });
});

/** The source file of the SSE route, whose grace-period timer the test drives. */
const THREADS_ROUTE = /[\\/]http[\\/]routes[\\/]threads\.[jt]s:/;

/**
 * Holds back every `setTimeout` of exactly `delayMs` asked for by code in a file matching `from`
 * until `restore()` (the others run as usual): the caller gets a timer that never fires by itself,
 * which `clearTimeout` still cancels, and the test runs what is left of them with `runAll()` when it
 * says the time is over. The caller's file counts, not only the delay: node-postgres's pool asks
 * for 10 s too (an idle client's timeout), and holding it made the count of held timers 2 in CI.
 */
function holdTimersOf(delayMs: number, from: RegExp) {
  const realSetTimeout = globalThis.setTimeout;
  const realClearTimeout = globalThis.clearTimeout;
  const held = new Map<unknown, () => void>();
  const setSpy = vi.spyOn(globalThis, "setTimeout").mockImplementation(((
    callback: (...args: unknown[]) => void,
    ms?: number,
    ...args: unknown[]
  ) => {
    if (ms !== delayMs || !from.test(new Error().stack ?? "")) return realSetTimeout(callback, ms, ...args);
    const timer = realSetTimeout(() => {}, 2 ** 31 - 1);
    timer.unref();
    held.set(timer, () => callback(...args));
    return timer;
  }) as typeof setTimeout);
  const clearSpy = vi.spyOn(globalThis, "clearTimeout").mockImplementation((timer) => {
    held.delete(timer);
    realClearTimeout(timer);
  });
  return {
    /** How many held timers are still to run. */
    get pending() {
      return held.size;
    },
    /** The timers as they were; what is still held never runs. */
    restore: () => {
      setSpy.mockRestore();
      clearSpy.mockRestore();
      for (const timer of held.keys()) realClearTimeout(timer as NodeJS.Timeout);
      held.clear();
    },
    runAll: () => {
      for (const [timer, run] of [...held]) {
        held.delete(timer);
        realClearTimeout(timer as NodeJS.Timeout);
        run();
      }
    },
  };
}
