import type { ServerResponse } from "node:http";
import { StowageError } from "@stowage/core";
import { foldToolPairs, parseThreadItem } from "@stowage/thread-items";
import { Hono } from "hono";
import { type SSEStreamingApi, streamSSE } from "hono/streaming";
import type { Services } from "../../services.js";
import { type AppContext, type AppEnv, integerQuery, jsonBody } from "../context.js";
import { THREAD_ITEM_JSON_BODY } from "../limits.js";

/** Seconds between SSE comments that keep idle connections (and proxies) open. */
export const SSE_KEEPALIVE_SECONDS = 15;
/**
 * Events a live tail holds for a subscriber that reads slower than items are posted, and the
 * characters of their JSON (an item is up to 350 KB). Past either, the subscriber is dropped: its
 * queue is freed, it is sent `resync` and the stream ends, so a client that stopped reading costs
 * the server a bounded amount of memory, whatever is posted after.
 */
export const SSE_MAX_QUEUED_EVENTS = 256;
export const SSE_MAX_QUEUED_CHARS = 4 * 1024 * 1024;
/** Seconds a dropped subscriber has to take its `resync` event before its connection is cut. */
export const SSE_RESYNC_GRACE_SECONDS = 10;

const encoder = new TextEncoder();

const ref = (c: AppContext) => ({ jobId: c.req.param("jobId")!, alias: c.req.param("alias")! });

/** `?cursor=&limit=` of a paged listing. */
function page(c: AppContext) {
  const cursor = c.req.query("cursor");
  const limit = integerQuery(c, "limit");
  return { ...(cursor === undefined ? {} : { cursor }), ...(limit === undefined ? {} : { limit }) };
}

/**
 * The caller's job threads: post (logged in full, fitted, stamped with the caller as author),
 * read in pages folded, tail live (across every process sharing the store and the notifier).
 */
export function threadRoutes(services: Services) {
  const app = new Hono<AppEnv>();

  app.get("/threads", async (c) => {
    const listing = await c.get("tenant").threads.threads({ ...page(c), signal: c.req.raw.signal });
    return c.json(listing);
  });

  app.post("/threads/:jobId/:alias/items", async (c) => {
    const item = parseThreadItem(await jsonBody(c, THREAD_ITEM_JSON_BODY));
    // The author is whoever the key belongs to; a client-sent user_id is replaced.
    const posted = await c.get("tenant").threads.post(ref(c), item, {
      author: c.get("principalId"),
      signal: c.req.raw.signal,
    });
    return c.json({ item: posted }, 201);
  });

  app.get("/threads/:jobId/:alias", async (c) => {
    const { threads } = c.get("tenant");
    const info = await threads.thread(ref(c));
    const { items, cursor } = await threads.items(ref(c), { ...page(c), signal: c.req.raw.signal });
    return c.json({
      ...ref(c),
      status: info?.status ?? "active",
      ...(info?.failure ? { failure: info.failure } : {}),
      entries: foldToolPairs(items),
      cursor,
    });
  });

  // What a truncated item left out: its full payload, stored before the fitted item was posted.
  // Streamed from the store as `{"item": <the stored JSON>}`, never held whole in memory.
  app.get("/threads/:jobId/:alias/items/:itemId/full", async (c) => {
    const stored = await c.get("tenant").threads.streamFullItem(ref(c), c.req.param("itemId"), {
      signal: c.req.raw.signal,
    });
    if (!stored) throw new StowageError("NOT_FOUND", `no item ${c.req.param("itemId")} in this thread`);
    const body = stored.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        start: (controller) => controller.enqueue(encoder.encode('{"item":')),
        flush: (controller) => controller.enqueue(encoder.encode("}")),
      }),
    );
    return c.body(body, 200, { "content-type": "application/json" });
  });

  app.get("/threads/:jobId/:alias/events", async (c) => {
    const thread = ref(c);
    const release = services.limits.openStream(c.get("keyId"));
    const queue: { event: "item" | "status"; data: string }[] = [];
    let queuedChars = 0;
    let dropped = false;
    let sse: SSEStreamingApi | undefined;
    let cutTimer: NodeJS.Timeout | undefined;
    let wake: (() => void) | undefined;
    let unsubscribe: () => Promise<void> = async () => {};
    const stop = () => {
      release();
      unsubscribe().catch(() => {});
    };
    /** Past the bound: free the queue, stop listening, and cut the connection if `resync` cannot be sent soon. */
    const drop = () => {
      dropped = true;
      queue.length = 0;
      queuedChars = 0;
      stop();
      // The connection is cut only when the client does not take `resync` in time: a slow
      // client still learns why its stream ended; one that stopped reading frees its socket.
      cutTimer = setTimeout(() => {
        sse?.abort();
        (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing?.destroy();
      }, SSE_RESYNC_GRACE_SECONDS * 1000);
      cutTimer.unref();
      wake?.();
    };
    const enqueue = (event: "item" | "status", value: unknown) => {
      if (dropped) return;
      const data = JSON.stringify(value);
      if (queue.length >= SSE_MAX_QUEUED_EVENTS || queuedChars + data.length > SSE_MAX_QUEUED_CHARS) {
        drop();
        return;
      }
      queue.push({ event, data });
      queuedChars += data.length;
      wake?.();
    };
    try {
      unsubscribe = await c.get("tenant").threads.subscribe(thread, (item) => enqueue("item", item), {
        onStatus: (info) => enqueue("status", info),
      });
    } catch (err) {
      release();
      throw err;
    }
    // Dropped before `unsubscribe` was known: stop listening now.
    if (dropped) unsubscribe().catch(() => {});
    return streamSSE(c, async (stream) => {
      sse = stream;
      stream.onAbort(stop);
      await stream.writeSSE({ event: "ready", data: JSON.stringify(thread) });
      while (!stream.aborted) {
        if (dropped) {
          // The viewer reloads the thread and tails it again.
          await stream.writeSSE({
            event: "resync",
            data: JSON.stringify({ ...thread, reason: "SUBSCRIBER_TOO_SLOW" }),
          });
          break;
        }
        const next = queue.shift();
        if (next !== undefined) {
          queuedChars -= next.data.length;
          await stream.writeSSE(next);
          continue;
        }
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, SSE_KEEPALIVE_SECONDS * 1000).unref();
        });
        wake = undefined;
        if (queue.length === 0 && !dropped && !stream.aborted) await stream.write(": keepalive\n\n");
      }
      clearTimeout(cutTimer);
      stop();
    });
  });
  return app;
}
