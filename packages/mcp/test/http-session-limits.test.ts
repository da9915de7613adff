// How a full table of Streamable HTTP sessions makes room (createMcpHttpSessions): per owner, an
// owner's own idle session; in all, the idle session of the owner holding the most, then the
// requester's own idle one, then, for an owner under its fair share only, a busy session of the
// owner holding the most. Busy: a request in flight, or the GET notification stream open.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StowageError } from "@stowage/core";
import type { HotStateReader } from "@stowage/hot-state";
import { tempDirectory } from "@stowage/test-support";
import { afterEach, describe, expect, it } from "vitest";
import {
  createMcpHttpSessions,
  createStowageMcpServer,
  MCP_SESSION_HEADER,
  type McpHttpSessionsOptions,
  type StowageMcpServerOptions,
} from "../src/index.js";
import { SESSION_ID, sessionFixture } from "./session-fixture.js";

const base = await tempDirectory("stowage-mcp-http-limits-");
const URL_OF_MCP = "http://stowage.test/mcp";
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

const INITIALIZE = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});

const INITIALIZE_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
};

async function setUp(options: McpHttpSessionsOptions, overrides: Partial<StowageMcpServerOptions> = {}) {
  const fixture = await sessionFixture(base, overrides);
  const sessions = createMcpHttpSessions(options);
  closers.push(() => sessions.close());
  /** Every MCP session's server, by the name its test gave it, and whether it was closed. */
  const closed = new Map<string, boolean>();
  let naming = "";
  const fetchAs =
    (owner: string): typeof fetch =>
    async (input, init) => {
      const name = naming;
      return sessions.handle(new Request(input, init), {
        owner,
        scope: SESSION_ID,
        createServer: async () => {
          const server = createStowageMcpServer(fixture.options);
          closed.set(name, false);
          return {
            ...server,
            close: async () => {
              closed.set(name, true);
              await server.close();
            },
          };
        },
      });
    };
  /**
   * An SDK client of `owner` named `name`. Its own GET is answered 405 here (a client that does not
   * listen), so the session is idle between requests; `listen()` opens its notification stream,
   * which stays open (the session busy) until the returned stream is cancelled.
   */
  const connect = async (owner: string, name: string) => {
    naming = name;
    const transport = new StreamableHTTPClientTransport(new URL(URL_OF_MCP), {
      fetch: async (input, init) =>
        init?.method === "GET" ? new Response(null, { status: 405 }) : fetchAs(owner)(input, init),
    });
    const client = new Client({ name, version: "1.0.0" });
    await client.connect(transport);
    closers.push(() => client.close());
    const sessionId = transport.sessionId!;
    const listen = async () => {
      const response = await fetchAs(owner)(URL_OF_MCP, {
        method: "GET",
        headers: {
          accept: "text/event-stream",
          [MCP_SESSION_HEADER]: sessionId,
          "mcp-protocol-version": "2025-06-18",
        },
      });
      expect(response.status).toBe(200);
      return response.body!;
    };
    return { client, listen };
  };
  /** A raw `initialize` of `owner`: its answer's status (200, or 429 when refused) and error data. */
  const initialize = async (owner: string, name: string) => {
    naming = name;
    const response = await fetchAs(owner)(URL_OF_MCP, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: INITIALIZE,
    });
    if (response.status === 200) {
      await response.body?.cancel();
      return { status: response.status, data: undefined };
    }
    const body = (await response.json()) as { error: { data: Record<string, unknown> } };
    return { status: response.status, data: body.error.data };
  };
  /** The names of the sessions closed so far. */
  const closedNames = () => [...closed].filter(([, isClosed]) => isClosed).map(([name]) => name);
  /** A raw POST of `owner` without a session id: its status and its JSON-RPC error. */
  const postWithoutSession = async (owner: string, body: unknown) => {
    naming = "none";
    const response = await fetchAs(owner)(URL_OF_MCP, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, text };
  };
  /** An `initialize` of `owner` whose server cannot be built (its agent session is gone): what it throws. */
  const initializeUnbuildable = (owner: string) =>
    sessions
      .handle(new Request(URL_OF_MCP, { method: "POST", headers: INITIALIZE_HEADERS, body: INITIALIZE }), {
        owner,
        scope: SESSION_ID,
        createServer: async () => {
          throw new StowageError("NOT_FOUND", "no such agent session", { reason: "SESSION_NOT_FOUND" });
        },
      })
      .then(
        (response) => `answered ${response.status}`,
        (err: unknown) => (StowageError.is(err) ? err.code : "failed"),
      );
  return { connect, initialize, closedNames, postWithoutSession, initializeUnbuildable };
}

/** What an evicted session's client gets on its next request: the transport's 404. */
async function statusOfNextRequest(client: Client): Promise<number> {
  return client.listTools().then(
    () => 200,
    (err: { code?: number }) => err.code ?? -1,
  );
}

describe("a full table of Streamable HTTP sessions", () => {
  it("lets a new owner in by closing the least recently used idle session of the owner holding the most", async () => {
    const { connect, closedNames } = await setUp({ maxSessions: 4, maxSessionsPerOwner: 3 });
    const a1 = await connect("user:alice", "a1");
    await connect("user:alice", "a2");
    await connect("user:alice", "a3");
    await connect("user:bob", "b1");
    // Four sessions, all idle: Alice holds the most.
    const carol = await connect("user:carol", "c1");
    expect(closedNames()).toEqual(["a1"]);
    expect((await carol.client.listTools()).tools.length).toBeGreaterThan(0);

    // a1's client is told its session is gone (404, as the MCP specification says), and starts a
    // new one: nobody holds more than Alice now, so her own least recently used idle one goes.
    expect(await statusOfNextRequest(a1.client)).toBe(404);
    const again = await connect("user:alice", "a4");
    expect((await again.client.listTools()).tools.length).toBeGreaterThan(0);
    expect(closedNames()).toEqual(["a1", "a2"]);
  });

  it("refuses an owner at its own cap with 429 when every one of its sessions is busy, and only that owner", async () => {
    const { connect, initialize, closedNames } = await setUp({ maxSessions: 8, maxSessionsPerOwner: 2 });
    const a1 = await connect("user:alice", "a1");
    await a1.listen();
    await connect("user:alice", "a2");
    // At her cap, Alice's idle session makes room, never her listening one.
    const a3 = await connect("user:alice", "a3");
    expect(closedNames()).toEqual(["a2"]);
    await a3.listen();

    const refused = await initialize("user:alice", "a4");
    expect(refused.status).toBe(429);
    expect(refused.data).toMatchObject({ code: "RATE_LIMITED", reason: "TOO_MANY_MCP_SESSIONS" });
    expect(refused.data?.details).toMatchObject({ limit: 2 });
    expect((await initialize("user:bob", "b1")).status).toBe(200);
    expect(closedNames()).toEqual(["a2"]);
    expect(await statusOfNextRequest(a1.client)).toBe(200);
    expect(await statusOfNextRequest(a3.client)).toBe(200);
  });

  it("closes an idle session before a busy one, and refuses an owner at its fair share rather than close a busy one", async () => {
    const { connect, initialize, closedNames } = await setUp({ maxSessions: 4, maxSessionsPerOwner: 4 });
    const streams: ReadableStream<Uint8Array>[] = [];
    const a1 = await connect("user:alice", "a1");
    streams.push(await a1.listen());
    const a2 = await connect("user:alice", "a2");
    streams.push(await a2.listen());
    await connect("user:alice", "a3");
    const b1 = await connect("user:bob", "b1");
    streams.push(await b1.listen());

    // Alice holds the most: her idle a3 goes, her listening ones stay.
    const c1 = await connect("user:carol", "c1");
    streams.push(await c1.listen());
    expect(closedNames()).toEqual(["a3"]);

    // Every session is busy now. Bob holds 1, his fair share of 4 among 3 owners: he is refused.
    const refused = await initialize("user:bob", "b2");
    expect(refused.status).toBe(429);
    expect(refused.data).toMatchObject({ code: "RATE_LIMITED", reason: "TOO_MANY_MCP_SESSIONS" });
    expect(closedNames()).toEqual(["a3"]);
    for (const client of [a1, a2, b1, c1]) expect(await statusOfNextRequest(client.client)).toBe(200);
    await Promise.all(streams.map((stream) => stream.cancel()));
  });

  it("lets an owner under its fair share in when every session is busy: the owner holding the most loses its least recently used stream", async () => {
    const { connect, closedNames } = await setUp({ maxSessions: 4, maxSessionsPerOwner: 4 });
    const streams: ReadableStream<Uint8Array>[] = [];
    const alice = [];
    for (const name of ["a1", "a2", "a3"]) {
      const client = await connect("user:alice", name);
      streams.push(await client.listen());
      alice.push(client);
    }
    const b1 = await connect("user:bob", "b1");
    streams.push(await b1.listen());

    const carol = await connect("user:carol", "c1");
    expect(closedNames()).toEqual(["a1"]);
    // The evicted session's stream ends (the session closed cleanly), and its client gets 404.
    const reader = streams[0]!.getReader();
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      // keep-alive comments, if any, until the end
    }
    expect(await statusOfNextRequest(alice[0]!.client)).toBe(404);
    for (const client of [alice[1]!, alice[2]!, b1, carol]) {
      expect(await statusOfNextRequest(client.client)).toBe(200);
    }
    await Promise.all(streams.slice(1).map((stream) => stream.cancel()));
  });

  it("counts a session with a request in flight as busy", async () => {
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered = () => {};
    const reached = new Promise<void>((resolve) => {
      entered = resolve;
    });
    // A hot-state read that answers when the test says so: a request held in flight.
    const hotState: HotStateReader = {
      latest: async () => {
        entered();
        await gate;
        return null;
      },
      get: async () => null,
    };
    const { connect, initialize, closedNames } = await setUp(
      { maxSessions: 8, maxSessionsPerOwner: 1 },
      { hotState },
    );
    const a1 = await connect("user:alice", "a1");
    const reading = a1.client.readResource({ uri: "hot-state://latest" }).then(
      () => "read",
      (err: { data?: { code?: string } }) => err.data?.code ?? "failed",
    );
    await reached;
    // Alice's only session is answering a request: it is not idle, so her new one is refused.
    expect((await initialize("user:alice", "a2")).status).toBe(429);
    expect(closedNames()).toEqual([]);
    release();
    expect(await reading).toBe("NOT_FOUND");
    // Answered, it is idle again, and makes room.
    expect((await initialize("user:alice", "a3")).status).toBe(200);
    expect(closedNames()).toEqual(["a1"]);
  });
});

describe("a POST that opens no session", () => {
  const NOT_INITIALIZE: [string, unknown][] = [
    ["a ping", { jsonrpc: "2.0", id: 7, method: "ping" }],
    ["a tools/list", { jsonrpc: "2.0", id: 7, method: "tools/list" }],
    ["a notification", { jsonrpc: "2.0", method: "notifications/initialized" }],
    [
      "an initialize whose params do not fit",
      { jsonrpc: "2.0", id: 7, method: "initialize", params: { protocolVersion: 5, capabilities: {} } },
    ],
  ];

  it("closes nobody's session to make room for it, in a full table or at the owner's cap", async () => {
    const { connect, closedNames, postWithoutSession } = await setUp({
      maxSessions: 3,
      maxSessionsPerOwner: 2,
    });
    const a1 = await connect("user:alice", "a1");
    const a2 = await connect("user:alice", "a2");
    const b1 = await connect("user:bob", "b1");
    // The table is full and every session idle: a new session of Carol's would close Alice's a1,
    // a new one of Alice's her own a1. A message that opens no session closes neither.
    for (const owner of ["user:carol", "user:alice"]) {
      for (const [what, body] of NOT_INITIALIZE) {
        const { status, text } = await postWithoutSession(owner, body);
        expect(status, `${owner}: ${what}: ${text}`).toBeGreaterThanOrEqual(400);
        expect(status, `${owner}: ${what}`).not.toBe(429);
        expect(closedNames(), `${owner}: ${what}`).toEqual([]);
      }
    }
    for (const client of [a1, a2, b1]) expect(await statusOfNextRequest(client.client)).toBe(200);
  });

  it("closes nobody's session for an initialize whose server cannot be built (an agent session that is gone)", async () => {
    const { connect, closedNames, initializeUnbuildable } = await setUp({
      maxSessions: 3,
      maxSessionsPerOwner: 2,
    });
    const a1 = await connect("user:alice", "a1");
    const a2 = await connect("user:alice", "a2");
    const b1 = await connect("user:bob", "b1");
    for (const owner of ["user:carol", "user:alice"]) {
      expect(await initializeUnbuildable(owner)).toBe("NOT_FOUND");
      expect(closedNames(), owner).toEqual([]);
    }
    for (const client of [a1, a2, b1]) expect(await statusOfNextRequest(client.client)).toBe(200);
  });
});
