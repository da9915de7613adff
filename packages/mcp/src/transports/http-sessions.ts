import { randomUUID } from "node:crypto";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { describeValue, errorBody, readStreamToBytes, StowageError } from "@stowage/core";
import type { StowageMcpServer } from "../server/create-server.js";

/** Default most MCP sessions kept open at once, all owners together; past it a new one is refused. */
export const DEFAULT_MAX_HTTP_SESSIONS = 256;
/** Default most MCP sessions one owner keeps open; past it that owner's least recently used one is closed. */
export const DEFAULT_MAX_HTTP_SESSIONS_PER_OWNER = 16;
/** Default time an MCP session may stay unused (no request, no open notification stream) before it is closed. */
export const DEFAULT_HTTP_SESSION_IDLE_MS = 30 * 60 * 1000;
/** The header of the Streamable HTTP transport that names an MCP session. */
export const MCP_SESSION_HEADER = "mcp-session-id";
/** Largest JSON-RPC POST body read (the SDK transport's own default bound). */
const MAX_REQUEST_BODY_BYTES = 4 * 1024 * 1024;

/** Options of `createMcpHttpSessions`. */
export interface McpHttpSessionsOptions {
  /** Most sessions of all owners together; a new one past it is refused (RATE_LIMITED), nobody else's is closed. */
  maxSessions?: number;
  /** Most sessions of one owner; a new one past it closes that owner's least recently used session. */
  maxSessionsPerOwner?: number;
  /** How long a session may stay unused (no request, no open GET notification stream) before it is closed. */
  idleMs?: number;
}

/** Who asks, as the app authenticated them, and for what. */
export interface McpHttpRequestScope {
  /** The authenticated principal (`user:alice`): an MCP session answers its owner only. */
  owner: string;
  /** What the session serves (the agent session id): a session answers on its own URL only. */
  scope: string;
  /** Builds the server of a new MCP session (called on `initialize` only). */
  createServer(): Promise<StowageMcpServer>;
}

export interface McpHttpSessions {
  /** Answers one Streamable HTTP request (POST, GET for the notification stream, DELETE). */
  handle(request: Request, scope: McpHttpRequestScope): Promise<Response>;
  /** Closes every MCP session. */
  close(): Promise<void>;
  /** `close()`, for `await using sessions = createMcpHttpSessions()`. */
  [Symbol.asyncDispose](): Promise<void>;
}

interface Entry {
  owner: string;
  scope: string;
  transport: WebStandardStreamableHTTPServerTransport;
  server: StowageMcpServer;
  /** When its last request came, or its last notification stream closed. */
  lastUsed: number;
  /** Its GET notification streams still open: while one is, the session is in use. */
  openStreams: number;
}

/**
 * The response of a session's GET notification stream, counted in `entry.openStreams` while it is
 * open: a client listening for updates of its subscriptions uses its session however long it
 * sends no request. The stream closes when the client goes away (the transport's keep-alive writes
 * fail on a dead connection, and the app's server cancels the body) or the session closes; the
 * session's idle time counts from then.
 */
function countWhileOpen(entry: Entry, response: Response): Response {
  if (!response.ok || response.body === null) return response;
  const source = response.body.getReader();
  entry.openStreams++;
  let open = true;
  const closed = () => {
    if (!open) return;
    open = false;
    entry.openStreams--;
    entry.lastUsed = Date.now();
  };
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const { done, value } = await source.read();
          if (done) {
            closed();
            controller.close();
          } else controller.enqueue(value);
        } catch (err) {
          closed();
          controller.error(err);
        }
      },
      async cancel(reason) {
        closed();
        await source.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

/** A JSON-RPC error answer carrying a StowageError's wire body as `data`. */
function jsonRpcError(status: number, code: number, err: StowageError): Response {
  const body = errorBody(err);
  return Response.json(
    { jsonrpc: "2.0", error: { code, message: body.error, data: body }, id: null },
    { status },
  );
}

/** The transport's own answer to an unknown session (-32001, 404), with the wire body as data. */
function sessionNotFound(): Response {
  return jsonRpcError(
    404,
    -32001,
    new StowageError("NOT_FOUND", "no such MCP session", { reason: "MCP_SESSION_NOT_FOUND" }),
  );
}

/**
 * A POST's JSON-RPC message, read here so that a batch is refused before it runs: one POST is one
 * request of the app's rate limit, and a batch would make it up to a hundred tool calls. MCP
 * 2025-06-18 dropped batching; no SDK client sends one. A Response when the body is refused.
 */
async function singleMessageOf(request: Request): Promise<{ parsedBody: unknown } | Response> {
  let text: string;
  try {
    const bytes = request.body
      ? await readStreamToBytes(request.body, { maxBytes: MAX_REQUEST_BODY_BYTES })
      : new Uint8Array();
    text = new TextDecoder().decode(bytes);
  } catch (err) {
    if (!StowageError.is(err, "TOO_LARGE")) throw err;
    return jsonRpcError(
      413,
      -32000,
      new StowageError("TOO_LARGE", `an MCP request body must be at most ${MAX_REQUEST_BODY_BYTES} bytes`, {
        reason: "MCP_REQUEST_TOO_LARGE",
      }),
    );
  }
  let parsedBody: unknown;
  try {
    parsedBody = JSON.parse(text);
  } catch {
    return jsonRpcError(
      400,
      -32700,
      new StowageError("INVALID_INPUT", "the MCP request body is not JSON", { reason: "INVALID_JSON" }),
    );
  }
  if (Array.isArray(parsedBody)) {
    return jsonRpcError(
      400,
      -32600,
      new StowageError("INVALID_INPUT", "JSON-RPC batches are not accepted: send one message per request", {
        reason: "BATCH_NOT_SUPPORTED",
      }),
    );
  }
  return { parsedBody };
}

function positiveInteger(name: string, value: number, min: number): number {
  if (!Number.isSafeInteger(value) || value < min) {
    throw new StowageError(
      "INVALID_INPUT",
      `${name} must be an integer ≥ ${min}, got ${describeValue(value)}`,
    );
  }
  return value;
}

/**
 * The MCP sessions of a Streamable HTTP endpoint behind an app's own authentication. A session is
 * bound to the principal and the scope that opened it: another principal presenting its id gets
 * the same 404 as for an id that never existed. Sessions hold subscriptions, so they are kept:
 * at most `maxSessionsPerOwner` per owner (its least recently used one makes room for its new
 * one), at most `maxSessions` in all (a new one is then refused: one owner's flood never closes
 * another owner's session), each closed after `idleMs` unused: without a request and without its
 * GET notification stream open.
 */
export function createMcpHttpSessions(options: McpHttpSessionsOptions = {}): McpHttpSessions {
  const maxSessions = positiveInteger("maxSessions", options.maxSessions ?? DEFAULT_MAX_HTTP_SESSIONS, 1);
  const maxPerOwner = positiveInteger(
    "maxSessionsPerOwner",
    options.maxSessionsPerOwner ?? DEFAULT_MAX_HTTP_SESSIONS_PER_OWNER,
    1,
  );
  const idleMs = positiveInteger("idleMs", options.idleMs ?? DEFAULT_HTTP_SESSION_IDLE_MS, 1000);
  const sessions = new Map<string, Entry>();
  /** Sessions being opened (between the check and `initialize`'s answer), per owner: they count too. */
  const opening = new Map<string, number>();
  let openingTotal = 0;

  const drop = async (id: string) => {
    const entry = sessions.get(id);
    if (!entry) return;
    sessions.delete(id);
    await entry.server.close().catch(() => {});
  };
  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const [id, entry] of sessions) {
        if (entry.openStreams === 0 && now - entry.lastUsed > idleMs) void drop(id);
      }
    },
    Math.min(idleMs, 60_000),
  );
  sweep.unref();

  /** Makes room for one more session of `owner`, or refuses; the caller must `release` the slot. */
  function reserve(owner: string): () => void {
    const own = [...sessions].filter(([, entry]) => entry.owner === owner);
    if (own.length + (opening.get(owner) ?? 0) >= maxPerOwner) {
      // The owner's own least recently used session goes; nobody else's ever does. One holding its
      // notification stream open is in use now: the owner's idle ones go first, and only when
      // every one streams, the one whose last request is oldest.
      const streaming = (entry: Entry) => (entry.openStreams > 0 ? 1 : 0);
      const oldest = own.sort(
        (a, b) => streaming(a[1]) - streaming(b[1]) || a[1].lastUsed - b[1].lastUsed,
      )[0];
      if (!oldest) throw tooMany(`at most ${maxPerOwner} MCP sessions are being opened at once per caller`);
      void drop(oldest[0]);
    } else if (sessions.size + openingTotal >= maxSessions) {
      throw tooMany(`the server holds its most MCP sessions (${maxSessions}); try again later`);
    }
    opening.set(owner, (opening.get(owner) ?? 0) + 1);
    openingTotal++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      openingTotal--;
      const left = (opening.get(owner) ?? 1) - 1;
      if (left === 0) opening.delete(owner);
      else opening.set(owner, left);
    };
  }

  const close = async () => {
    clearInterval(sweep);
    await Promise.all([...sessions.keys()].map(drop));
  };

  return {
    async handle(request, { owner, scope, createServer }) {
      const id = request.headers.get(MCP_SESSION_HEADER);
      if (id !== null) {
        const entry = sessions.get(id);
        if (!entry || entry.owner !== owner || entry.scope !== scope) return sessionNotFound();
        entry.lastUsed = Date.now();
        if (request.method === "GET")
          return countWhileOpen(entry, await entry.transport.handleRequest(request));
        if (request.method !== "POST") return entry.transport.handleRequest(request);
        const message = await singleMessageOf(request);
        return message instanceof Response ? message : entry.transport.handleRequest(request, message);
      }
      if (request.method !== "POST") return sessionNotFound();
      const message = await singleMessageOf(request);
      if (message instanceof Response) return message;
      let release: () => void;
      try {
        release = reserve(owner);
      } catch (err) {
        return jsonRpcError(429, -32000, err as StowageError);
      }
      try {
        const server = await createServer();
        const transport = new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: randomUUID,
          onsessioninitialized: (sessionId) => {
            sessions.set(sessionId, {
              owner,
              scope,
              transport,
              server,
              lastUsed: Date.now(),
              openStreams: 0,
            });
            release();
          },
          onsessionclosed: (sessionId) => void drop(sessionId),
        });
        await server.connect(transport);
        const response = await transport.handleRequest(request, message);
        // A POST that did not open a session (not an initialize) leaves nothing behind.
        if (transport.sessionId === undefined || !sessions.has(transport.sessionId)) await server.close();
        return response;
      } finally {
        release();
      }
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

function tooMany(message: string): StowageError {
  return new StowageError("RATE_LIMITED", message, {
    reason: "TOO_MANY_MCP_SESSIONS",
    details: { retryAfterSeconds: 5 },
  });
}
