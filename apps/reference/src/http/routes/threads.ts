import { StowageError } from "@stowage/core";
import { foldToolPairs, parseThreadItem } from "@stowage/thread-items";
import { Hono } from "hono";
import { streamSSE } from "hono/streaming";
import type { Services } from "../../services.js";
import { type AppEnv, jsonBody, requireKey } from "../context.js";

/** Seconds between SSE comments that keep idle connections (and proxies) open. */
export const SSE_KEEPALIVE_SECONDS = 15;

/** Thread items of job threads: post (logged in full, then fitted), read folded, tail live. */
export function threadRoutes(services: Services) {
  const app = new Hono<AppEnv>();
  app.use("/threads", requireKey(services));
  app.use("/threads/*", requireKey(services));
  const ref = (c: { req: { param(name: string): string } }) => ({
    jobId: c.req.param("jobId"),
    alias: c.req.param("alias"),
  });

  app.get("/threads", async (c) => {
    const threads = await services.threads.threads();
    return c.json({
      threads: await Promise.all(
        threads.map(async (thread) => ({ ...thread, items: (await services.threads.items(thread)).length })),
      ),
    });
  });

  app.post("/threads/:jobId/:alias/items", async (c) => {
    const item = parseThreadItem(await jsonBody(c));
    const posted = await services.threads.post(ref(c), item);
    return c.json({ item: posted }, 201);
  });

  app.get("/threads/:jobId/:alias", async (c) => {
    const items = await services.threads.items(ref(c));
    return c.json({ ...ref(c), entries: foldToolPairs(items) });
  });

  // What a truncated item left out, from the thread log written before it was posted.
  app.get("/threads/:jobId/:alias/items/:itemId/full", async (c) => {
    const item = await services.threads.fullItem(ref(c), c.req.param("itemId"));
    if (!item) throw new StowageError("NOT_FOUND", `no item ${c.req.param("itemId")} in the thread log`);
    return c.json({ item });
  });

  app.get("/threads/:jobId/:alias/events", (c) => {
    const thread = ref(c);
    const queue: unknown[] = [];
    let wake: (() => void) | undefined;
    const unsubscribe = services.threads.subscribe(thread, (item) => {
      queue.push(item);
      wake?.();
    });
    return streamSSE(c, async (stream) => {
      stream.onAbort(unsubscribe);
      await stream.writeSSE({ event: "ready", data: JSON.stringify(thread) });
      while (!stream.aborted) {
        const item = queue.shift();
        if (item !== undefined) {
          await stream.writeSSE({ event: "item", data: JSON.stringify(item) });
          continue;
        }
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, SSE_KEEPALIVE_SECONDS * 1000);
        });
        wake = undefined;
        if (queue.length === 0 && !stream.aborted) await stream.write(": keepalive\n\n");
      }
      unsubscribe();
    });
  });
  return app;
}
