import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import type { MiddlewareHandler } from "hono";

/**
 * Bytes of a request body that are still read (and dropped) after it was answered without
 * reading them, so that its connection can take the client's next request. A longer rest, or one
 * the route left half read, closes the connection instead.
 */
const MAX_DRAINED_BODY_BYTES = 1024 * 1024;
/** Milliseconds the rest of a body may take to arrive before the connection is closed instead. */
const MAX_DRAIN_MS = 1000;
/**
 * How long, and how many more bytes, a connection closed after its answer still takes from a
 * client that is sending the rest of its body, before it is cut.
 */
const LINGER_MS = 2000;
const MAX_LINGER_BYTES = 64 * 1024 * 1024;

function hasBody(incoming: IncomingMessage): boolean {
  const length = incoming.headers["content-length"];
  return incoming.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0");
}

/** Reads what is left of the request body, within the bounds; true when it was read to its end. */
async function drainRest(request: Request, incoming: IncomingMessage): Promise<boolean> {
  if (Number(incoming.headers["content-length"] ?? 0) > MAX_DRAINED_BODY_BYTES) return false;
  const body = request.body;
  // Half read by a reader that is still holding it (a body limit that stopped), or cancelled.
  if (!body || body.locked) return false;
  const reader = body.getReader();
  const timer = setTimeout(() => reader.cancel().catch(() => {}), MAX_DRAIN_MS);
  try {
    let bytes = 0;
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      bytes += chunk.value.byteLength;
      if (bytes > MAX_DRAINED_BODY_BYTES) return false;
    }
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
    reader.releaseLock();
  }
  // A cancelled body reads as done too: only the message's own end says it was all read.
  return incoming.readableEnded;
}

/**
 * Closes `incoming`'s connection after its answer the way a client can read: Node would destroy
 * the socket the moment the answer is written, and a socket destroyed with bytes of the body
 * still arriving answers them with a reset, which the client may see instead of the answer (a
 * request still sending its body got EPIPE). Here the server ends its side after the answer and
 * goes on taking what the client sends (and dropping it) until the client closes too, or
 * {@link LINGER_MS} or {@link MAX_LINGER_BYTES} are past.
 */
function closeAfterAnswerWhenClientStops(incoming: IncomingMessage): void {
  const socket = incoming.socket as Socket & { destroySoon?: () => void };
  // Node's http server calls `destroySoon` once an answer with `Connection: close` is written.
  socket.destroySoon = () => {
    socket.end();
    const cut = setTimeout(() => socket.destroy(), LINGER_MS);
    cut.unref();
    socket.once("close", () => clearTimeout(cut));
    let bytes = 0;
    // Whoever read the body before (a stream that stopped) stops being fed; the rest is dropped.
    incoming.removeAllListeners("data");
    incoming.on("data", (chunk: Uint8Array) => {
      bytes += chunk.byteLength;
      if (bytes > MAX_LINGER_BYTES) socket.destroy();
    });
    incoming.resume();
  };
}

/**
 * Keeps the connection of every answer usable. A request answered before its body was read to
 * its end (refused for its size, its depth, its key, …) would leave the rest of the body on the
 * connection, where the server can never read the client's next request: the server gave up on
 * it after half a second and dropped a connection it had just answered `keep-alive` on, so a
 * pooled client's next request failed. Here the rest is read and dropped when it is short and
 * arrives soon ({@link MAX_DRAINED_BODY_BYTES}, {@link MAX_DRAIN_MS}); otherwise the answer
 * says `Connection: close` and the server closes the connection after it, once the client has
 * read it (see {@link closeAfterAnswerWhenClientStops}), so the client opens a fresh one for its
 * next request.
 */
export function keepConnectionsUsable(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
    if (!incoming || incoming.readableEnded || !hasBody(incoming)) return;
    if (await drainRest(c.req.raw, incoming)) return;
    closeAfterAnswerWhenClientStops(incoming);
    try {
      c.res.headers.set("connection", "close");
    } catch {
      // A response with immutable headers (one fetched from elsewhere): answer a copy.
      const headers = new Headers(c.res.headers);
      headers.set("connection", "close");
      c.res = new Response(c.res.body, { status: c.res.status, statusText: c.res.statusText, headers });
    }
  };
}
