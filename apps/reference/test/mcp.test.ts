import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { expectStowageError } from "@stowage/core/testing";
import { errorFromMcp } from "@stowage/mcp";
import { textItem } from "@stowage/thread-items";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./support/test-app.js";

const SESSION = "7c9e6679-7425-40de-944b-e07fc1f90ae7";
const alice = { kind: "user", id: "alice" } as const;
const bob = { kind: "user", id: "bob" } as const;

describe("MCP over Streamable HTTP at /mcp/sessions/:id", () => {
  let app: TestApp;
  let aliceKey: string;
  let bobKey: string;
  const clients: Client[] = [];

  beforeAll(async () => {
    app = await startTestApp();
    aliceKey = await app.keyFor(alice);
    bobKey = await app.keyFor(bob);
    const tenant = app.server.services.tenant(alice);
    const session = await tenant.agentSessions.create(SESSION);
    await session.artifacts.saveArtifact("bash", "alice's build log\nall green\n");
    await tenant.threads.post({ jobId: SESSION, alias: "main" }, textItem("started"), {
      author: "user:alice",
    });
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await app.close();
  });

  async function connect(key: string | undefined, sessionId = SESSION) {
    const transport = new StreamableHTTPClientTransport(new URL(`${app.url}/mcp/sessions/${sessionId}`), {
      requestInit: { headers: key ? { authorization: `Bearer ${key}` } : {} },
    });
    const client = new Client({ name: "app-test", version: "1.0.0" });
    await client.connect(transport);
    clients.push(client);
    return { client, transport };
  }

  /** A raw `initialize` POST to the session's MCP URL as `key`. */
  async function initialize(key: string): Promise<Response> {
    return app.call(`/mcp/sessions/${SESSION}`, {
      key,
      headers: { accept: "application/json, text/event-stream" },
      json: {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "flood", version: "1" },
        },
      },
    });
  }

  it("an MCP session ends with its agent session: 404 after the deletion, also once the id is registered again", async () => {
    const sessionId = "0f8fad5b-d9cb-469f-a165-70867728950e";
    expect((await app.call("/agents/sessions", { key: aliceKey, json: { sessionId } })).status).toBe(201);
    const { client } = await connect(aliceKey, sessionId);
    expect((await client.listResources()).resources).toEqual([]);
    const mcpSessionId = (client.transport as StreamableHTTPClientTransport).sessionId!;
    const ping = () =>
      app.call(`/mcp/sessions/${sessionId}`, {
        key: aliceKey,
        headers: { accept: "application/json, text/event-stream", "mcp-session-id": mcpSessionId },
        json: { jsonrpc: "2.0", id: 7, method: "ping" },
      });
    expect((await ping()).status).toBe(200);
    expect(
      (await app.call(`/agents/sessions/${sessionId}`, { key: aliceKey, method: "DELETE" })).status,
    ).toBe(200);
    expect((await ping()).status).toBe(404);
    expect((await app.call("/agents/sessions", { key: aliceKey, json: { sessionId } })).status).toBe(201);
    expect((await ping()).status).toBe(404);
  });

  it("serves the caller's session: resources, tools and updates", async () => {
    const { client } = await connect(aliceKey);
    expect((await client.listResources()).resources.map((r) => r.uri)).toEqual([
      "artifact://0",
      "thread://main",
    ]);
    const read = await client.readResource({ uri: "artifact://0" });
    expect(read.contents[0]).toMatchObject({
      mimeType: "text/plain",
      text: "alice's build log\nall green\n",
    });
    const tools = (await client.listTools()).tools.map((t) => t.name);
    expect(tools).toEqual(["read_artifact", "query_agent_output", "search_session", "artifacts_get"]);
    const found = await client.callTool({ name: "search_session", arguments: { text: "GREEN" } });
    expect(found.structuredContent).toMatchObject({
      matches: [{ uri: "artifact://0", line: 2 }],
      complete: true,
    });

    const updated: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updated.push(n.params.uri);
    });
    await client.subscribeResource({ uri: "thread://main" });
    const posted = await app.call(`/threads/${SESSION}/main/items`, {
      key: aliceKey,
      json: textItem("posted over the API"),
    });
    expect(posted.status).toBe(201);
    await expect.poll(() => updated, { timeout: 30_000 }).toEqual(["thread://main"]);
  });

  it("refuses hostile ids exactly as the HTTP API does", async () => {
    const { client } = await connect(aliceKey);
    for (const id of ["1%00", "-1", "01", "abc", "99999999999999999999999"]) {
      const http = await app.call(`/sessions/${SESSION}/artifact/${id}`, { key: aliceKey });
      const body = (await http.json()) as { code: string; reason?: string };
      expect(http.status).toBe(400);
      const uri = `artifact://${decodeURIComponent(id)}`;
      const err = await expectStowageError(
        client.readResource({ uri }).then(
          () => {
            throw new Error("read succeeded");
          },
          (e: unknown) => {
            throw errorFromMcp(e) ?? e;
          },
        ),
        "INVALID_INPUT",
      );
      expect([err.code, err.reason]).toEqual([body.code, body.reason]);
    }
  });

  it("needs an API key, and keeps another principal out", async () => {
    await expect(connect(undefined)).rejects.toThrow();
    const unauthorized = await app.call(`/mcp/sessions/${SESSION}`, {
      json: { jsonrpc: "2.0", id: 1, method: "initialize", params: {} },
    });
    expect(unauthorized.status).toBe(401);

    // Bob cannot open Alice's session: it is not in his namespace.
    const asBob = await initialize(bobKey);
    expect(asBob.status).toBe(404);
    expect(((await asBob.json()) as { code: string }).code).toBe("NOT_FOUND");

    // Nor use Alice's MCP session id with his own key.
    const { transport } = await connect(aliceKey);
    const stolen = await app.call(`/mcp/sessions/${SESSION}`, {
      key: bobKey,
      headers: {
        accept: "application/json, text/event-stream",
        "mcp-session-id": transport.sessionId!,
        "mcp-protocol-version": "2025-06-18",
      },
      json: { jsonrpc: "2.0", id: 2, method: "resources/read", params: { uri: "artifact://0" } },
    });
    expect(stolen.status).toBe(404);
    expect(await stolen.text()).not.toContain("build log");
  });

  it("closes only a flooding principal's own sessions to make room for its new ones", async () => {
    const tenant = app.server.services.tenant(bob);
    await tenant.agentSessions.create(SESSION).catch(() => {});
    const { client } = await connect(aliceKey);
    // Bob opens far more sessions than one principal may keep (16): his own oldest ones go.
    const opened: string[] = [];
    // 260 is past the whole table (256): Bob's own idle sessions make room, Alice's (listening) stays.
    for (let n = 0; n < 260; n++) {
      const response = await initialize(bobKey);
      expect(response.status).toBe(200);
      opened.push(response.headers.get("mcp-session-id")!);
      await response.body?.cancel();
    }
    expect((await client.readResource({ uri: "artifact://0" })).contents[0]).toMatchObject({
      text: "alice's build log\nall green\n",
    });
    const asBob = (sessionId: string) =>
      app.call(`/mcp/sessions/${SESSION}`, {
        key: bobKey,
        headers: {
          accept: "application/json, text/event-stream",
          "mcp-session-id": sessionId,
          "mcp-protocol-version": "2025-06-18",
        },
        json: { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} },
      });
    expect((await asBob(opened[0]!)).status).toBe(404);
    expect((await asBob(opened.at(-1)!)).status).toBe(200);
  });

  it("refuses a JSON-RPC batch: one request of the rate limit is one message", async () => {
    const { transport } = await connect(aliceKey);
    const batch = Array.from({ length: 100 }, (_, n) => ({
      jsonrpc: "2.0",
      id: n + 1,
      method: "tools/call",
      params: { name: "search_session", arguments: { text: "green" } },
    }));
    const response = await app.call(`/mcp/sessions/${SESSION}`, {
      key: aliceKey,
      headers: {
        accept: "application/json, text/event-stream",
        "mcp-session-id": transport.sessionId!,
        "mcp-protocol-version": "2025-06-18",
      },
      json: batch,
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { data: { code: string; reason: string } } };
    expect(body.error.data).toMatchObject({ code: "INVALID_INPUT", reason: "BATCH_NOT_SUPPORTED" });
  });
});
