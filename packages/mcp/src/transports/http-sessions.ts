import { randomUUID } from "node:crypto";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { InitializeRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { describeValue, errorBody, type JsonBudget, readJsonWithinBudget, StowageError } from "@stowage/core";
import { describeIssues } from "../errors/issues.js";
import type { StowageMcpServer } from "../server/create-server.js";
import { type Admission, admit, type HeldSession, isBusy } from "./session-admission.js";

/** Default most MCP sessions kept open at once, all owners together; past it one makes room or a new one is refused. */
const DEFAULT_MAX_HTTP_SESSIONS = 256;
/** Default most MCP sessions one owner keeps open; past it that owner's least recently used idle one is closed. */
const DEFAULT_MAX_HTTP_SESSIONS_PER_OWNER = 16;
/** Default time an MCP session may stay idle (no request being answered, no open notification stream) before it is closed. */
const DEFAULT_HTTP_SESSION_IDLE_MS = 30 * 60 * 1000;
/** The header of the Streamable HTTP transport that names an MCP session. */
export const MCP_SESSION_HEADER = "mcp-session-id";
/** Largest JSON-RPC POST body read (the SDK transport's own default bound). */
const MAX_REQUEST_BODY_BYTES = 4 * 1024 * 1024;
/**
 * What one JSON-RPC POST body may cost to parse. A client's message nests a few levels (its
 * capabilities, a tool's arguments) in tens of values; 4 MiB of nested arrays or empty objects
 * held the event loop for most of a second in `JSON.parse`, so deeper or busier bodies are refused
 * while they are read.
 */
const MCP_REQUEST_JSON_BUDGET: JsonBudget = {
  maxBytes: MAX_REQUEST_BODY_BYTES,
  maxDepth: 64,
  maxValues: 10_000,
};

/** Options of `createMcpHttpSessions`. */
export interface McpHttpSessionsOptions {
  /**
   * Most sessions of all owners together. Past it an idle session of the owner holding the most
   * makes room (see `admit`); an owner holding its fair share of a table with none idle is refused.
   */
  maxSessions?: number;
  /** Most sessions of one owner; past it that owner's least recently used idle session makes room, or it is refused. */
  maxSessionsPerOwner?: number;
  /** How long a session may stay idle (no request being answered, no open GET notification stream) before it is closed. */
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

interface Entry extends HeldSession {
  scope: string;
  transport: WebStandardStreamableHTTPServerTransport;
  server: StowageMcpServer;
  lastUsed: number;
  requests: number;
  /** Its GET notification streams still open: while one is, the session is in use. */
  streams: number;
}

/**
 * Counts one use of `entry` (a request, or a notification stream) until the returned release is
 * called: a busy session is never closed for being idle, and makes room only for an owner under
 * its fair share. A client listening for updates of its subscriptions uses its session however
 * long it sends no request; its stream closes when the client goes away (the transport's
 * keep-alive writes fail on a dead connection, and the app's server cancels the body) or the
 * session closes, and the session's idle time counts from then.
 */
function holding(entry: Entry, use: "requests" | "streams"): () => void {
  entry[use]++;
  entry.lastUsed = Date.now();
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    entry[use]--;
    entry.lastUsed = Date.now();
  };
}

/**
 * `response`, calling `finished` once its body has been sent, failed or been cancelled (at once when
 * it has none): a request is answered when its answer, an SSE stream for a POST, has gone out.
 */
function afterBody(response: Response, finished: () => void): Response {
  if (response.body === null) {
    finished();
    return response;
  }
  const source = response.body.getReader();
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const { done, value } = await source.read();
          if (done) {
            finished();
            controller.close();
          } else controller.enqueue(value);
        } catch (err) {
          finished();
          controller.error(err);
        }
      },
      async cancel(reason) {
        finished();
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
  let parsedBody: unknown;
  try {
    parsedBody = await readJsonWithinBudget(request.body, MCP_REQUEST_JSON_BUDGET, {
      what: "the MCP request body",
    });
  } catch (err) {
    if (StowageError.is(err, "TOO_LARGE")) {
      return jsonRpcError(
        413,
        -32000,
        new StowageError("TOO_LARGE", `an MCP request body must be at most ${MAX_REQUEST_BODY_BYTES} bytes`, {
          reason: "MCP_REQUEST_TOO_LARGE",
        }),
      );
    }
    if (!StowageError.is(err, "INVALID_INPUT")) throw err;
    // -32700: not JSON; -32600: JSON, but deeper or busier than any request (JSON_TOO_DEEP, JSON_TOO_MANY_VALUES).
    return jsonRpcError(400, err.reason === "INVALID_JSON" ? -32700 : -32600, err);
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

/**
 * Why a POST without a session id opens no session, or undefined when it is an `initialize` whose
 * params fit. Refused before a place is reserved: making room closes another session, and a
 * message that opens none (a ping, an initialize the server would refuse) must close nobody's.
 */
function notAnInitialize(parsedBody: unknown): Response | undefined {
  const method = (parsedBody as { method?: unknown } | null)?.method;
  if (method !== "initialize") {
    return jsonRpcError(
      400,
      -32000,
      new StowageError(
        "INVALID_INPUT",
        "a request without an mcp-session-id header must be an initialize: open a session first",
        { reason: "MCP_SESSION_REQUIRED" },
      ),
    );
  }
  const parsed = InitializeRequestSchema.safeParse(parsedBody);
  if (parsed.success) return undefined;
  return jsonRpcError(
    400,
    -32602,
    new StowageError("INVALID_INPUT", `initialize: ${describeIssues(parsed.error.issues)}`, {
      reason: "INVALID_PARAMS",
    }),
  );
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
 * Answers a request of the open session `entry`, counted as a use of it until its answer has gone
 * out (a GET: its notification stream, for as long as it stays open).
 */
async function answerInSession(
  entry: Entry,
  request: Request,
  isOpen: (entry: Entry) => boolean,
): Promise<Response> {
  const release = holding(entry, request.method === "GET" ? "streams" : "requests");
  try {
    if (request.method !== "POST") return afterBody(await entry.transport.handleRequest(request), release);
    const message = await singleMessageOf(request);
    if (message instanceof Response) return afterBody(message, release);
    // Closed to make room while its body was read: the client starts a new session, as for any 404.
    if (!isOpen(entry)) return afterBody(sessionNotFound(), release);
    return afterBody(await entry.transport.handleRequest(request, message), release);
  } catch (err) {
    release();
    throw err;
  }
}

/**
 * The MCP sessions of a Streamable HTTP endpoint behind an app's own authentication. A session is
 * bound to the principal and the scope that opened it: another principal presenting its id gets
 * the same 404 as for an id that never existed. Sessions hold subscriptions, so they are kept, and
 * closed after `idleMs` idle: no request being answered and no GET notification stream open. The
 * table is shared by every owner, so no set of owners may fill it for the others: an owner keeps
 * at most `maxSessionsPerOwner` (its own idle ones make room; with none idle it is refused), and a
 * full table (`maxSessions`) makes room from whoever holds the most (`admit`). A closed session's
 * client gets 404 on its next request and, as the MCP specification says, starts a new one.
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
        if (!isBusy(entry) && now - entry.lastUsed > idleMs) void drop(id);
      }
    },
    Math.min(idleMs, 60_000),
  );
  sweep.unref();

  /** The refusal a new session of `owner` would get now, or undefined; closes nothing. */
  function admissionRefusal(owner: string): StowageError | undefined {
    const admission = admit(owner, sessions.values(), opening, { maxSessions, maxPerOwner });
    return admission.admitted ? undefined : tooMany(admission, maxSessions);
  }

  /** Makes room for one more session of `owner`, or refuses; the caller must `release` the slot. */
  function reserve(owner: string): () => void {
    const admission = admit(owner, sessions.values(), opening, { maxSessions, maxPerOwner });
    if (!admission.admitted) throw tooMany(admission, maxSessions);
    // Removed from the table at once (the close itself finishes later): the place is free now.
    if (admission.close !== undefined) void drop(admission.close);
    opening.set(owner, (opening.get(owner) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
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
        return answerInSession(entry, request, (open) => sessions.get(id) === open);
      }
      if (request.method !== "POST") return sessionNotFound();
      const message = await singleMessageOf(request);
      if (message instanceof Response) return message;
      const refused = notAnInitialize(message.parsedBody);
      if (refused) return refused;
      // Refused at once when the table has no place for the owner (no server is built for it);
      // a place is reserved, which may close another session to make room, only once the server
      // is built: one that cannot be (its agent session is gone) closes nobody's.
      const refusal = admissionRefusal(owner);
      if (refusal) return jsonRpcError(429, -32000, refusal);
      const server = await createServer();
      let release: () => void;
      try {
        release = reserve(owner);
      } catch (err) {
        await server.close().catch(() => {});
        return jsonRpcError(429, -32000, err as StowageError);
      }
      // The initialize is a request of the new session until its answer has gone out.
      let answered = () => {};
      try {
        const transport = new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: randomUUID,
          onsessioninitialized: (sessionId) => {
            const entry: Entry = {
              id: sessionId,
              owner,
              scope,
              transport,
              server,
              lastUsed: Date.now(),
              requests: 0,
              streams: 0,
            };
            sessions.set(sessionId, entry);
            answered = holding(entry, "requests");
            release();
          },
          onsessionclosed: (sessionId) => void drop(sessionId),
        });
        await server.connect(transport);
        const response = await transport.handleRequest(request, message).catch((err: unknown) => {
          answered();
          throw err;
        });
        // A POST that did not open a session (not an initialize) leaves nothing behind.
        if (transport.sessionId === undefined || !sessions.has(transport.sessionId)) await server.close();
        return afterBody(response, answered);
      } finally {
        release();
      }
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** The refusal of a new session (429): what limit the owner is at, and when to try again. */
function tooMany(refusal: Extract<Admission, { admitted: false }>, maxSessions: number): StowageError {
  const message =
    refusal.cap === "owner"
      ? `at most ${refusal.limit} MCP sessions per caller, and every one of yours is in use: end one (DELETE) or try again later`
      : `the server holds its most MCP sessions (${maxSessions}), none idle, and you hold your share of them (${refusal.limit}): try again later`;
  return new StowageError("RATE_LIMITED", message, {
    reason: "TOO_MANY_MCP_SESSIONS",
    details: { limit: refusal.limit, retryAfterSeconds: 5 },
  });
}
