import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { expectStowageError } from "@stowage/core/testing";
import { tempDirectory } from "@stowage/test-support";
import { textItem } from "@stowage/thread-items";
import { afterEach, describe, expect, it } from "vitest";
import {
  createMcpHttpSessions,
  createStowageMcpServer,
  MCP_SESSION_HEADER,
  type McpHttpSessionsOptions,
} from "../src/index.js";
import { numberedLines, SESSION_ID, sessionFixture, stowageErrorOf } from "./session-fixture.js";
import { stowageMcpCommand } from "./stdio-command.js";

const base = await tempDirectory("stowage-mcp-transports-");
const execFileAsync = promisify(execFile);
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

describe("stdio (the stowage-mcp bin in a child process)", () => {
  it("lists, reads, calls and is notified", async () => {
    const fixture = await sessionFixture(base);
    const transport = new StdioClientTransport({
      ...stowageMcpCommand(["--sessions-dir", fixture.sessions.dir, "--session", SESSION_ID]),
      stderr: "pipe",
    });
    const client = new Client({ name: "stdio-test", version: "1.0.0" });
    await client.connect(transport);
    closers.push(() => client.close());

    expect((await client.listResources()).resources.map((r) => r.uri)).toEqual([
      "artifact://0",
      "artifact://1",
      "agent://0-Explore",
      "agent://1-Report",
    ]);
    expect((await client.readResource({ uri: "artifact://1?offset=3000" })).contents[0]).toMatchObject({
      text: "line 3000\n",
    });
    const tool = await client.callTool({ name: "read_artifact", arguments: { id: "0" } });
    expect(tool.structuredContent).toMatchObject({ lines: { first: 1, last: 1, hasMore: false } });
    await expectStowageError(
      stowageErrorOf(client.readResource({ uri: "artifact://../x" })),
      "INVALID_INPUT",
      "INVALID_ARTIFACT_ID",
    );

    const updated: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updated.push(n.params.uri);
    });
    // Another process (this one) writes the artifact the server's client subscribed to.
    await client.subscribeResource({ uri: "artifact://2" });
    await fixture.session.artifacts.saveArtifact("bash", numberedLines(2));
    await expect.poll(() => updated, { timeout: 30_000 }).toEqual(["artifact://2"]);
  });

  it("serves a session named by its session file", async () => {
    const fixture = await sessionFixture(base);
    const transport = new StdioClientTransport({
      ...stowageMcpCommand(["--session-file", fixture.session.sessionFile]),
      stderr: "pipe",
    });
    const client = new Client({ name: "stdio-test", version: "1.0.0" });
    await client.connect(transport);
    closers.push(() => client.close());
    expect(
      (await client.readResource({ uri: "agent://1-Report?q=.findings[0].file" })).contents[0],
    ).toMatchObject({
      text: "a.ts",
    });
    const search = await client.callTool({ name: "search_session", arguments: { text: "needle" } });
    expect(search.structuredContent).toMatchObject({ matches: [{ uri: "agent://0-Explore", line: 2 }] });
  });

  it("exits with a usage error without a session", async () => {
    const transport = new StdioClientTransport({ ...stowageMcpCommand([]), stderr: "pipe" });
    let stderr = "";
    transport.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const client = new Client({ name: "stdio-test", version: "1.0.0" });
    await expect(client.connect(transport)).rejects.toThrow();
    await expect.poll(() => stderr, { timeout: 30_000 }).toContain("usage: stowage-mcp");
  });
});

describe("the stowage-mcp bin's command line", () => {
  it("prints its version, and the usage for an unknown option", async () => {
    const { command, args } = stowageMcpCommand(["--version"]);
    const version = await execFileAsync(command, args);
    const manifest = JSON.parse(await readFile(new URL("../package.json", import.meta.url), "utf8"));
    expect(version.stdout).toBe(`${manifest.version}\n`);
    const wrong = stowageMcpCommand(["--sesion", "x"]);
    const failed = await execFileAsync(wrong.command, wrong.args).then(
      () => undefined,
      (err: { code: number; stderr: string }) => err,
    );
    expect(failed?.code).toBe(2);
    expect(failed?.stderr).toContain("usage: stowage-mcp");
  });
});

describe("Streamable HTTP (createMcpHttpSessions)", () => {
  async function httpSetUp(options: McpHttpSessionsOptions = {}) {
    const fixture = await sessionFixture(base);
    const sessions = createMcpHttpSessions(options);
    closers.push(() => sessions.close());
    /** A fetch that goes to the handler as `owner`, as an app's authentication would decide. */
    const fetchAs =
      (owner: string): typeof fetch =>
      async (input, init) =>
        sessions.handle(new Request(input, init), {
          owner,
          scope: SESSION_ID,
          createServer: async () => createStowageMcpServer(fixture.options),
        });
    /** An SDK client; one not `listening` gets its GET answered 405, so its session is idle between requests. */
    const connect = async (owner: string, { listening = true } = {}) => {
      const transport = new StreamableHTTPClientTransport(new URL("http://stowage.test/mcp"), {
        fetch: async (input, init) =>
          !listening && init?.method === "GET"
            ? new Response(null, { status: 405 })
            : fetchAs(owner)(input, init),
      });
      const client = new Client({ name: "http-test", version: "1.0.0" });
      await client.connect(transport);
      closers.push(() => client.close());
      return { client, transport };
    };
    return { fixture, sessions, connect, fetchAs };
  }

  it("lists, reads every kind, calls every tool and is notified", async () => {
    const { fixture, connect } = await httpSetUp();
    const { client } = await connect("user:alice");
    const { resources } = await client.listResources();
    expect(resources).toHaveLength(7);
    for (const uri of [
      "artifact://0",
      "agent://0-Explore",
      fixture.png.ref,
      "thread://main",
      `content-ref://${fixture.record.artifact_id}`,
      "hot-state://latest",
    ]) {
      expect((await client.readResource({ uri })).contents).toHaveLength(1);
    }
    for (const [name, args] of [
      ["read_artifact", { id: "1", limit: 1 }],
      ["query_agent_output", { id: "1-Report", q: ".findings[0].file" }],
      ["search_session", { text: "needle" }],
      ["artifacts_get", { artifact_id: fixture.record.artifact_id }],
      ["upload_artifact", { filePath: "shot.png" }],
    ] as const) {
      const result = await client.callTool({ name, arguments: args });
      expect(result.isError, `${name}: ${JSON.stringify(result.content)}`).toBeFalsy();
    }
    const updated: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updated.push(n.params.uri);
    });
    await client.subscribeResource({ uri: "thread://main" });
    await fixture.threads.post(fixture.thread, textItem("over HTTP"), { author: "user:alice" });
    await expect.poll(() => updated, { timeout: 30_000 }).toEqual(["thread://main"]);
  });

  it("answers another principal presenting a session id as if it did not exist", async () => {
    const { connect, fetchAs } = await httpSetUp();
    const { transport } = await connect("user:alice");
    const sessionId = transport.sessionId!;
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
    const body = JSON.stringify({ jsonrpc: "2.0", id: 7, method: "resources/list", params: {} });
    const headers = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-session-id": sessionId,
      "mcp-protocol-version": "2025-06-18",
    };
    const stolen = await fetchAs("user:mallory")("http://stowage.test/mcp", {
      method: "POST",
      headers,
      body,
    });
    expect(stolen.status).toBe(404);
    expect(((await stolen.json()) as { error: { data: unknown } }).error.data).toMatchObject({
      code: "NOT_FOUND",
      reason: "MCP_SESSION_NOT_FOUND",
    });
    const unknown = await fetchAs("user:alice")("http://stowage.test/mcp", {
      method: "POST",
      headers: { ...headers, "mcp-session-id": "00000000-0000-0000-0000-000000000000" },
      body,
    });
    expect(unknown.status).toBe(404);
  });

  it("keeps each owner to its own sessions: its idle ones make room for its new one, never another owner's", async () => {
    const { connect } = await httpSetUp({ maxSessions: 4, maxSessionsPerOwner: 2 });
    const alice = await connect("user:alice", { listening: false });
    const bob1 = await connect("user:bob", { listening: false });
    await connect("user:bob", { listening: false });
    // Bob's third closes Bob's least recently used idle one, never Alice's.
    await connect("user:bob", { listening: false });
    await expect(bob1.client.listTools()).rejects.toThrow();
    expect((await alice.client.listTools()).tools.length).toBeGreaterThan(0);
    // How a full table makes room, and who is refused: http-session-limits.test.ts.
  });

  it("refuses batches and bodies that are not JSON", async () => {
    const { connect, fetchAs } = await httpSetUp();
    const { transport } = await connect("user:alice");
    const post = (body: string) =>
      fetchAs("user:alice")("http://stowage.test/mcp", {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          [MCP_SESSION_HEADER]: transport.sessionId!,
          "mcp-protocol-version": "2025-06-18",
        },
        body,
      });
    const message = { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} };
    const batch = await post(JSON.stringify([message, { ...message, id: 2 }]));
    expect(batch.status).toBe(400);
    expect(((await batch.json()) as { error: { data: unknown } }).error.data).toMatchObject({
      code: "INVALID_INPUT",
      reason: "BATCH_NOT_SUPPORTED",
    });
    const garbage = await post("{not json");
    expect(garbage.status).toBe(400);
    expect((await post(JSON.stringify(message))).status).toBe(200);
  });

  it("refuses bodies nested too deep or holding too many values before parsing them", async () => {
    const { connect, fetchAs } = await httpSetUp();
    const { transport } = await connect("user:alice");
    const post = (body: string) =>
      fetchAs("user:alice")("http://stowage.test/mcp", {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          [MCP_SESSION_HEADER]: transport.sessionId!,
          "mcp-protocol-version": "2025-06-18",
        },
        body,
      });
    // 3 MiB of nested arrays (under the 4 MiB limit) took 0.5 s to parse; 65 levels are refused.
    for (const [body, reason] of [
      [`${"[".repeat(1_572_864)}${"]".repeat(1_572_864)}`, "JSON_TOO_DEEP"],
      [
        `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":${"{".repeat(64)}${"}".repeat(64)}}`,
        "JSON_TOO_DEEP",
      ],
      [`[${"{},".repeat(10_000)}{}]`, "JSON_TOO_MANY_VALUES"],
    ] as const) {
      const refused = await post(body);
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as { error: { code: number; data: unknown } }).error).toMatchObject({
        code: -32600,
        data: { code: "INVALID_INPUT", reason },
      });
    }
    const message = { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} };
    expect((await post(JSON.stringify(message))).status).toBe(200);
  });

  it("closes every session when disposed with await using", async () => {
    const fixture = await sessionFixture(base);
    let client: Client;
    {
      await using sessions = createMcpHttpSessions();
      const transport = new StreamableHTTPClientTransport(new URL("http://stowage.test/mcp"), {
        fetch: async (input, init) =>
          sessions.handle(new Request(input, init), {
            owner: "user:alice",
            scope: SESSION_ID,
            createServer: async () => createStowageMcpServer(fixture.options),
          }),
      });
      client = new Client({ name: "dispose-test", version: "1.0.0" });
      await client.connect(transport);
      expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    }
    await expect(client.listTools()).rejects.toThrow();
  });
});

describe("createStowageMcpServer", () => {
  it("closes the server when disposed with await using", async () => {
    const fixture = await sessionFixture(base);
    let closed = false;
    {
      await using server = createStowageMcpServer(fixture.options);
      server.server.onclose = () => {
        closed = true;
      };
      const [, serverSide] = InMemoryTransport.createLinkedPair();
      await server.connect(serverSide);
    }
    expect(closed).toBe(true);
  });
});
