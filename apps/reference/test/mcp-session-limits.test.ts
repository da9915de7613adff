// The MCP session table shared by every principal, through the app over real HTTP with the SDK's
// Streamable HTTP client: no set of principals can fill it for everyone else. A principal at its
// own cap is refused (429) when every session it holds is busy; a full table makes room by closing
// an idle session of the principal holding the most, and a principal under its fair share gets in
// even when every session is busy.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp } from "./support/test-app.js";

const SESSION = "5b0c9c2e-1f7a-4c55-9d43-0d7e8a7c1b21";

/** The app with a principal per name, each with a key and the agent session SESSION. */
async function appWith(env: Record<string, string>) {
  const app = await startTestApp(env);
  const keys = new Map<string, string>();
  const clients: Client[] = [];
  const keyOf = async (name: string) => {
    let key = keys.get(name);
    if (key === undefined) {
      const principal = { kind: "user", id: name } as const;
      key = await app.keyFor(principal);
      await app.server.services.tenant(principal).agentSessions.create(SESSION);
      keys.set(name, key);
    }
    return key;
  };
  /**
   * An SDK client of `name`'s on the session's MCP URL. `listening` (the SDK's default) keeps its
   * GET notification stream open, so the session is busy; otherwise its GET is answered 405 before
   * it leaves (a client that does not listen), and the session is idle between requests.
   */
  const connect = async (name: string, { listening }: { listening: boolean }) => {
    const key = await keyOf(name);
    const transport = new StreamableHTTPClientTransport(new URL(`${app.url}/mcp/sessions/${SESSION}`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
      fetch: async (input, init) =>
        !listening && init?.method === "GET" ? new Response(null, { status: 405 }) : fetch(input, init),
    });
    const client = new Client({ name: `${name}-client`, version: "1.0.0" });
    await client.connect(transport);
    clients.push(client);
    return client;
  };
  /** A raw `initialize` as `name`: its status, and the error's wire body when refused. */
  const initialize = async (name: string) => {
    const response = await app.call(`/mcp/sessions/${SESSION}`, {
      key: await keyOf(name),
      headers: { accept: "application/json, text/event-stream" },
      json: {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "raw", version: "1" },
        },
      },
    });
    if (response.status === 200) {
      await response.body?.cancel();
      return { status: response.status, data: undefined };
    }
    const body = (await response.json()) as { error: { data: Record<string, unknown> } };
    return { status: response.status, data: body.error.data };
  };
  const close = async () => {
    await Promise.all(clients.map((client) => client.close()));
    await app.close();
  };
  return { connect, initialize, close };
}

/** The HTTP status of a client's next request: 200, or the 404 of a session that was closed. */
function statusOfNextRequest(client: Client): Promise<number> {
  return client.listTools().then(
    () => 200,
    (err: { code?: number }) => err.code ?? -1,
  );
}

describe("the MCP session table at its defaults (256 sessions, 16 per principal)", () => {
  let app: Awaited<ReturnType<typeof appWith>>;
  beforeAll(async () => {
    app = await appWith({});
  });
  afterAll(() => app.close());

  it("lets a 17th principal in when 16 principals hold 16 sessions each; listening ones stay, the evicted client gets 404 and starts again", async () => {
    // p0's clients listen (busy); p1 … p15's are idle between requests.
    const held = new Map<string, Client[]>();
    for (let p = 0; p < 16; p++) {
      const clients: Client[] = [];
      for (let n = 0; n < 16; n++) clients.push(await app.connect(`p${p}`, { listening: p === 0 }));
      held.set(`p${p}`, clients);
    }
    const newcomer = await app.connect("p16", { listening: true });
    expect((await newcomer.listTools()).tools.length).toBeGreaterThan(0);

    // Every principal holds 16: the least recently used idle session of theirs went, p1's first.
    const evicted = held.get("p1")![0]!;
    expect(await statusOfNextRequest(evicted)).toBe(404);
    for (const client of held.get("p0")!) expect(await statusOfNextRequest(client)).toBe(200);
    expect(await statusOfNextRequest(held.get("p1")![1]!)).toBe(200);

    // The evicted client's principal starts a new session (p2 … p15 hold more than p1 now).
    const again = await app.connect("p1", { listening: false });
    expect(await statusOfNextRequest(again)).toBe(200);
  });
});

describe("the MCP session table with small caps (4 sessions, 2 per principal)", () => {
  const SMALL = { STOWAGE_MCP_MAX_SESSIONS: "4", STOWAGE_MCP_MAX_SESSIONS_PER_PRINCIPAL: "2" };

  it("refuses a principal at its own cap whose sessions all listen, and nobody else", async () => {
    const app = await appWith(SMALL);
    try {
      const alice = [
        await app.connect("alice", { listening: true }),
        await app.connect("alice", { listening: true }),
      ];
      const refused = await app.initialize("alice");
      expect(refused.status).toBe(429);
      expect(refused.data).toMatchObject({ code: "RATE_LIMITED", reason: "TOO_MANY_MCP_SESSIONS" });
      const bob = await app.connect("bob", { listening: true });
      const carol = await app.connect("carol", { listening: true });
      for (const client of [...alice, bob, carol]) expect(await statusOfNextRequest(client)).toBe(200);

      // The table is full and every session listens. Dave holds none, under his fair share of 1:
      // Alice, holding the most, loses her least recently used session; its client gets 404.
      const dave = await app.connect("dave", { listening: true });
      expect(await statusOfNextRequest(dave)).toBe(200);
      expect(await statusOfNextRequest(alice[0]!)).toBe(404);
      for (const client of [alice[1]!, bob, carol]) expect(await statusOfNextRequest(client)).toBe(200);
    } finally {
      await app.close();
    }
  });

  it("closes an idle session before a listening one, and refuses a principal at its fair share rather than close one", async () => {
    const app = await appWith({ ...SMALL, STOWAGE_MCP_MAX_SESSIONS_PER_PRINCIPAL: "4" });
    try {
      const alice = [
        await app.connect("alice", { listening: true }),
        await app.connect("alice", { listening: true }),
        await app.connect("alice", { listening: false }),
      ];
      const bob = await app.connect("bob", { listening: true });
      const carol = await app.connect("carol", { listening: true });
      expect(await statusOfNextRequest(alice[2]!)).toBe(404);
      const listening = [alice[0]!, alice[1]!, bob, carol];
      for (const client of listening) expect(await statusOfNextRequest(client)).toBe(200);

      // Bob holds 1, his fair share of 4 among 3 principals, and every session listens.
      const refused = await app.initialize("bob");
      expect(refused.status).toBe(429);
      expect(refused.data).toMatchObject({ code: "RATE_LIMITED", reason: "TOO_MANY_MCP_SESSIONS" });
      for (const client of listening) expect(await statusOfNextRequest(client)).toBe(200);
    } finally {
      await app.close();
    }
  });
});
