import type { MiddlewareHandler } from "hono";

/** Paths whose event streams are a thread's tail: told `resync` before they end, as a slow subscriber is. */
const THREAD_EVENTS = /^\/threads\/([^/]+)\/([^/]+)\/events$/;

const encoder = new TextEncoder();

/**
 * What a server being stopped still owes: the requests it is answering (an upload's completion
 * hashing the file, a signed PUT being stored) and its open event streams. `start()` stops taking
 * work (a new request is answered `Connection: close`, `/readyz` says 503), ends every event
 * stream at once (a thread's tail with `resync`, reason `SERVER_SHUTTING_DOWN`: its client reloads
 * the thread and tails it again, on another replica) and `settled(ms)` resolves when the other
 * requests are answered, or after `ms`, whichever is first.
 */
export interface Drain {
  readonly draining: boolean;
  middleware(): MiddlewareHandler;
  start(): void;
  /** Resolves `true` when every request was answered within `ms`, `false` when time ran out. */
  settled(ms: number): Promise<boolean>;
}

export function createDrain(): Drain {
  let draining = false;
  let inFlight = 0;
  const idle = new Set<() => void>();
  const streams = new Set<() => void>();
  const done = () => {
    inFlight -= 1;
    if (inFlight === 0) for (const resolve of idle) resolve();
  };
  return {
    get draining() {
      return draining;
    },
    middleware: () => async (c, next) => {
      inFlight += 1;
      let answered = false;
      try {
        await next();
        if (draining) closeAfter(c.res);
        const body = c.res.body;
        if (body && c.res.headers.get("content-type")?.startsWith("text/event-stream")) {
          // Counted until its last bytes are taken: the drain ends it, and waits for that.
          c.res = new Response(endable(body, resyncEvent(c.req.path), streams, draining, done), c.res);
          answered = true;
        }
      } finally {
        if (!answered) done();
      }
    },
    start() {
      if (draining) return;
      draining = true;
      for (const end of [...streams]) end();
    },
    settled(ms) {
      if (inFlight === 0) return Promise.resolve(true);
      return new Promise((resolve) => {
        const finish = (answered: boolean) => {
          clearTimeout(timer);
          idle.delete(onIdle);
          resolve(answered);
        };
        const onIdle = () => finish(true);
        const timer = setTimeout(() => finish(false), ms);
        idle.add(onIdle);
      });
    },
  };
}

/** Asks the client to open its next request elsewhere (a response with immutable headers is left as it is). */
function closeAfter(response: Response): void {
  try {
    response.headers.set("connection", "close");
  } catch {
    // A passed-through response: its connection is closed with the server's.
  }
}

/** The `resync` event a thread's tail is ended with, in the shape a slow subscriber's has; undefined for other streams. */
function resyncEvent(path: string): Uint8Array | undefined {
  const match = THREAD_EVENTS.exec(path);
  if (!match) return undefined;
  let thread: { jobId: string; alias: string };
  try {
    thread = { jobId: decodeURIComponent(match[1]!), alias: decodeURIComponent(match[2]!) };
  } catch {
    return undefined;
  }
  return encoder.encode(
    `event: resync\ndata: ${JSON.stringify({ ...thread, reason: "SERVER_SHUTTING_DOWN" })}\n\n`,
  );
}

/**
 * `body` passed through until the drain ends it: its source is cancelled (the route stops
 * listening and frees its subscription), a thread's tail is sent `resync` first, and the response
 * ends cleanly rather than being cut.
 */
function endable(
  body: ReadableStream<Uint8Array>,
  resync: Uint8Array | undefined,
  streams: Set<() => void>,
  alreadyDraining: boolean,
  finished: () => void,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let closed = false;
  let counted = true;
  /** Once, when the stream's last bytes were taken or it was cancelled. */
  const settle = () => {
    if (!counted) return;
    counted = false;
    finished();
  };
  const end = (controller: ReadableStreamDefaultController<Uint8Array>) => {
    if (closed) return;
    closed = true;
    streams.delete(ender);
    reader.cancel().catch(() => {});
    if (resync) controller.enqueue(resync);
    controller.close();
    // Its last bytes are queued: the server's close lets them out before it cuts connections.
    settle();
  };
  let ender: () => void = () => {};
  return new ReadableStream<Uint8Array>({
    start(controller) {
      ender = () => end(controller);
      streams.add(ender);
      if (alreadyDraining) ender();
    },
    async pull(controller) {
      let read: Awaited<ReturnType<typeof reader.read>>;
      try {
        read = await reader.read();
      } catch (err) {
        if (!closed) {
          closed = true;
          streams.delete(ender);
          controller.error(err);
        }
        settle();
        return;
      }
      if (closed) {
        settle();
        return;
      }
      if (read.done) {
        closed = true;
        streams.delete(ender);
        controller.close();
        settle();
      } else controller.enqueue(read.value);
    },
    cancel(reason) {
      closed = true;
      streams.delete(ender);
      settle();
      return reader.cancel(reason);
    },
  });
}
