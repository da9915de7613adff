// Streamable HTTP sessions in use and idle: a session holding its GET notification stream open is
// in use however long it sends nothing, both for the idle sweep and for the per-owner cap.
// How a full table makes room between owners: http-session-limits.test.ts.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { tempDirectory } from "@stowage/test-support";
import { afterEach, describe, expect, it } from "vitest";
import {
  createMcpHttpSessions,
  createStowageMcpServer,
  MCP_SESSION_HEADER,
  type McpHttpSessionsOptions,
} from "../src/index.js";
import { SESSION_ID, sessionFixture } from "./session-fixture.js";

const base = await tempDirectory("stowage-mcp-http-expiry-");
const URL_OF_MCP = "http://stowage.test/mcp";
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function setUp(options: McpHttpSessionsOptions) {
  const fixture = await sessionFixture(base);
  const sessions = createMcpHttpSessions(options);
  closers.push(() => sessions.close());
  /** Each MCP session's server, in the order they were opened, and whether it was closed. */
  const servers: { closed: boolean }[] = [];
  const fetchAs =
    (owner: string): typeof fetch =>
    async (input, init) =>
      sessions.handle(new Request(input, init), {
        owner,
        scope: SESSION_ID,
        createServer: async () => {
          const server = createStowageMcpServer(fixture.options);
          const record = { closed: false };
          servers.push(record);
          return {
            ...server,
            close: async () => {
              record.closed = true;
              await server.close();
            },
          };
        },
      });
  /**
   * A client whose own GET is answered 405 (a server without a notification stream), so that the
   * test holds the stream and closes it as an app's server does when its client goes away.
   */
  const connect = async (owner: string) => {
    const transport = new StreamableHTTPClientTransport(new URL(URL_OF_MCP), {
      fetch: async (input, init) =>
        init?.method === "GET" ? new Response(null, { status: 405 }) : fetchAs(owner)(input, init),
    });
    const client = new Client({ name: "expiry-test", version: "1.0.0" });
    await client.connect(transport);
    closers.push(() => client.close());
    const sessionId = transport.sessionId!;
    /** Opens the session's GET notification stream; its body stays open until cancelled. */
    const openStream = async () => {
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
    return { client, openStream };
  };
  return { connect, servers };
}

describe("idle expiry of Streamable HTTP sessions", () => {
  it("keeps a session whose notification stream is open; once it closes, the session expires", async () => {
    const { connect, servers } = await setUp({ idleMs: 1000 });
    const listening = await connect("user:alice");
    await listening.client.subscribeResource({ uri: "artifact://5" });
    const stream = await listening.openStream();
    // Opened after the listening one's last request: idle for less time than it when swept.
    await connect("user:alice");
    await expect.poll(() => servers[1]!.closed, { timeout: 30_000 }).toBe(true);
    expect(servers[0]!.closed).toBe(false);
    expect((await listening.client.listTools()).tools.length).toBeGreaterThan(0);

    await stream.cancel();
    await expect.poll(() => servers[0]!.closed, { timeout: 30_000 }).toBe(true);
    await expect(listening.client.listTools()).rejects.toThrow();
  });

  it("makes room for an owner's new session by closing its idle one before one that streams", async () => {
    const { connect, servers } = await setUp({ maxSessionsPerOwner: 2 });
    const first = await connect("user:alice");
    await first.openStream();
    const second = await connect("user:alice");
    // The second is the more recently used, but idle; the first is listening.
    const third = await connect("user:alice");
    expect(servers.map((server) => server.closed)).toEqual([false, true, false]);
    await expect(second.client.listTools()).rejects.toThrow();
    expect((await first.client.listTools()).tools.length).toBeGreaterThan(0);

    // When every session streams, none is closed: the owner's new one is refused (429).
    await third.openStream();
    expect((await third.client.listTools()).tools.length).toBeGreaterThan(0);
    await expect(connect("user:alice")).rejects.toThrow(/429|TOO_MANY_MCP_SESSIONS/);
    expect(servers.map((server) => server.closed)).toEqual([false, true, false]);
  });
});
