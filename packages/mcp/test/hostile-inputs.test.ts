import { execFileSync } from "node:child_process";
import { link, mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, McpError, ResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { createBlobStore, createOwnedBlobStore } from "@stowage/blob-store";
import { createMemoryObjectStore, type StowageErrorCode } from "@stowage/core";
import { expectStowageError, HOSTILE_REFS } from "@stowage/core/testing";
import { tempDirectory } from "@stowage/test-support";
import { afterAll, describe, expect, it } from "vitest";
import { createMcpHttpSessions, createStowageMcpServer } from "../src/index.js";
import { connectInMemory, PNG_BYTES, SESSION_ID, sessionFixture, stowageErrorOf } from "./session-fixture.js";

const base = await tempDirectory("stowage-mcp-hostile-");
const fixture = await sessionFixture(base);
const { client, close } = await connectInMemory(fixture.options);
afterAll(close);
execFileSync("mkfifo", [join(fixture.workspace, "pipe.txt")]);
await writeFile(join(base, "host-secret.txt"), "SERVER SECRET\n");
await link(join(base, "host-secret.txt"), join(fixture.workspace, "linked.txt"));
await mkdir(join(fixture.workspace, "folder"));
// A link below the workspace is never followed, wherever it leads.
await symlink(base, join(fixture.workspace, "out-dir"));

/**
 * What a hostile input gets back says what was wrong in a line: no validation dump (zod's issue
 * JSON), no stack, no path of the server's (its checkout, the fixture's directory), so an error
 * costs the caller's context a line and tells it nothing about the host.
 */
function expectShortMessage(message: string): void {
  expect(message.length, message.slice(0, 400)).toBeLessThan(300);
  expect(message).not.toMatch(/ZodError|invalid_type|"expected"|"code":|\n\s+at /);
  expect(message).not.toContain("/work/");
  expect(message).not.toContain(base);
}

/** Levels of a deep value: as deep as the SDK client's `JSON.stringify` still sends (about 4,000 overflow it). */
const DEEP = 2000;

/** `{ a: { a: … "x" } }`, `levels` deep. */
function deep(levels: number): unknown {
  let value: unknown = "x";
  for (let level = 0; level < levels; level++) value = { a: value };
  return value;
}

// The same URLs the HTTP API refuses (GET /sessions/:id/artifact/:n, …/agent/*), with the same codes.
const HOSTILE_INTERNAL_URLS: [string, StowageErrorCode, string][] = [
  ["artifact://../x", "INVALID_INPUT", "INVALID_ARTIFACT_ID"],
  ["artifact://1/../../etc", "INVALID_INPUT", "INVALID_ARTIFACT_ID"],
  ["artifact://%2e%2e", "INVALID_INPUT", "INVALID_ARTIFACT_ID"],
  ["artifact://1%00", "INVALID_INPUT", "INVALID_ARTIFACT_ID"],
  ["artifact://1\u0000", "INVALID_INPUT", "INVALID_ARTIFACT_ID"],
  ["artifact:///etc/passwd", "INVALID_INPUT", "INVALID_ARTIFACT_ID"],
  ["artifact://99999999999999999999999", "INVALID_INPUT", "INVALID_ARTIFACT_ID"],
  ["artifact://-1", "INVALID_INPUT", "INVALID_ARTIFACT_ID"],
  ["artifact://01", "INVALID_INPUT", "INVALID_ARTIFACT_ID"],
  ["artifact://1?x=1", "INVALID_INPUT", "INVALID_ARTIFACT_ID"],
  ["artifact://1#x", "INVALID_INPUT", "INVALID_ARTIFACT_ID"],
  ["artifact://", "INVALID_INPUT", "INVALID_ARTIFACT_ID"],
  ["agent://../x", "INVALID_INPUT", "INVALID_AGENT_OUTPUT_ID"],
  ["agent://%2e%2e", "INVALID_INPUT", "INVALID_AGENT_OUTPUT_ID"],
  ["agent:///etc/passwd", "INVALID_INPUT", "INVALID_AGENT_OUTPUT_ID"],
  ["agent://0-x\u0000", "INVALID_INPUT", "INVALID_AGENT_OUTPUT_ID"],
  ["agent://0-x%2F..%2F..", "INVALID_INPUT", "INVALID_AGENT_OUTPUT_ID"],
  ["agent://1-Report/a?q=.a", "INVALID_INPUT", "PATH_AND_QUERY"],
  ["agent://1-Report//a", "INVALID_INPUT", "INVALID_URL"],
  ["agent://1-Report?x=1", "INVALID_INPUT", "INVALID_URL"],
  ["agent://1-Report/findings?offset=1", "INVALID_INPUT", "PAGING_WITH_EXTRACTION"],
  ["agent://0-Explore/a", "INVALID_INPUT", "NOT_JSON"],
  ["agent://1-Report/../../secret.txt", "NOT_FOUND", "JSON_PATH_NOT_FOUND"],
  [`agent://0-x/${"a/".repeat(5000)}`, "INVALID_INPUT", "INVALID_URL"],
];

/** A row's name in the report: long values are cut. */
const named = <T extends [string, ...unknown[]]>(rows: T[]) =>
  rows.map(
    (row) =>
      [row[0].length > 60 ? `${row[0].slice(0, 30)}… (${row[0].length} chars)` : row[0], ...row] as const,
  );

const HOSTILE_OTHER_URIS: [string, StowageErrorCode, string | undefined][] = [
  ["artifact://0?offset=-1", "INVALID_INPUT", "INVALID_READ_OPTION"],
  ["artifact://0?offset=1&offset=2", "INVALID_INPUT", "INVALID_URL"],
  ["artifact://0?limit=0", "INVALID_INPUT", "INVALID_READ_OPTION"],
  ["artifact://1?limit=10001", "INVALID_INPUT", "INVALID_READ_OPTION"],
  ["artifact://1?offset=99999", "INVALID_INPUT", "OFFSET_PAST_END"],
  ["thread://../x", "INVALID_INPUT", undefined],
  ["thread://main/../../other", "INVALID_INPUT", undefined],
  ["thread://%2e%2e", "INVALID_INPUT", undefined],
  ["thread://main?cursor=%zz", "INVALID_INPUT", "INVALID_URL"],
  ["thread://main?limit=abc", "INVALID_INPUT", "INVALID_READ_OPTION"],
  ["thread://main?limit=101", "INVALID_INPUT", "INVALID_READ_OPTION"],
  ["thread://main?limit=0", "INVALID_INPUT", "INVALID_READ_OPTION"],
  ["artifact://0?char_offset=-1", "INVALID_INPUT", "INVALID_READ_OPTION"],
  ["artifact://0?char_offset=1&char_offset=2", "INVALID_INPUT", "INVALID_URL"],
  ["artifact://0?char_offset=99", "INVALID_INPUT", "OFFSET_PAST_END"],
  ["artifact://1?limit=5&char_offset=0", "INVALID_INPUT", "INVALID_READ_OPTION"],
  ["agent://1-Report/findings?char_offset=9999", "INVALID_INPUT", "OFFSET_PAST_END"],
  [`content-ref://${"A".repeat(64)}`, "INVALID_INPUT", "INVALID_CONTENT_REF"],
  ["content-ref://../../etc/passwd", "INVALID_INPUT", "INVALID_CONTENT_REF"],
  ["hot-state://0", "INVALID_INPUT", "INVALID_HOT_STATE_VERSION"],
  ["hot-state://01", "INVALID_INPUT", "INVALID_HOT_STATE_VERSION"],
  ["hot-state://../x", "INVALID_INPUT", "INVALID_HOT_STATE_VERSION"],
  ["hot-state://latest/../1", "INVALID_INPUT", "INVALID_HOT_STATE_VERSION"],
  ["hot-state://9999999999999", "INVALID_INPUT", "INVALID_HOT_STATE_VERSION"],
  ["file:///etc/passwd", "INVALID_INPUT", "INVALID_URL"],
  ["ARTIFACT://1", "INVALID_INPUT", "INVALID_URL"],
  ["https://example.com/", "INVALID_INPUT", "INVALID_URL"],
  [`artifact://${"1".repeat(9000)}`, "INVALID_INPUT", "INVALID_URL"],
];

describe("hostile resource URIs", () => {
  it.each(named(HOSTILE_INTERNAL_URLS))(
    "refuses %j as the HTTP API does",
    async (_name, uri, code, reason) => {
      const err = await expectStowageError(stowageErrorOf(client.readResource({ uri })), code, reason);
      expectShortMessage(err.message);
      // The router behind GET /sessions/:id/artifact/:n and …/agent/* answers the same.
      if (!uri.includes("offset=")) await expectStowageError(fixture.session.router.read(uri), code, reason);
    },
  );

  it.each(named(HOSTILE_OTHER_URIS))("refuses %j", async (_name, uri, code, reason) => {
    const err = await expectStowageError(stowageErrorOf(client.readResource({ uri })), code, reason);
    expectShortMessage(err.message);
  });

  it.each(HOSTILE_REFS.filter(([, ref]) => typeof ref === "string" && ref.startsWith("blob:")))(
    "refuses the blob ref %s",
    async (_why, ref) => {
      await expectStowageError(stowageErrorOf(client.readResource({ uri: ref as string })), "INVALID_INPUT");
    },
  );

  it("never leaks a file through a link planted in the artifacts directory", async () => {
    const secret = join(base, "secret.txt");
    await writeFile(secret, "TOP SECRET\n");
    await symlink(secret, join(fixture.session.artifacts.dir, "50.bash.log"));
    const err = await expectStowageError(
      stowageErrorOf(client.readResource({ uri: "artifact://50" })),
      "FORBIDDEN",
      "NOT_A_REGULAR_FILE",
    );
    expect(JSON.stringify(err)).not.toContain("TOP SECRET");
  });
});

describe("hostile tool arguments", () => {
  it.each([
    ["read_artifact", { id: "../x" }, "INVALID_INPUT", "INVALID_ARTIFACT_ID"],
    ["read_artifact", { id: "1/../../etc" }, "INVALID_INPUT", "INVALID_ARTIFACT_ID"],
    ["read_artifact", { id: "0", offset: 0 }, "INVALID_INPUT", "INVALID_TOOL_INPUT"],
    ["read_artifact", { id: "0", limit: 10_001 }, "INVALID_INPUT", "INVALID_TOOL_INPUT"],
    ["read_artifact", { id: "0", extra: true }, "INVALID_INPUT", "INVALID_TOOL_INPUT"],
    ["read_artifact", {}, "INVALID_INPUT", "INVALID_TOOL_INPUT"],
    ["read_artifact", { id: "9".repeat(300) }, "INVALID_INPUT", "INVALID_TOOL_INPUT"],
    ["read_artifact", { id: "0", char_offset: -1 }, "INVALID_INPUT", "INVALID_TOOL_INPUT"],
    ["read_artifact", { id: "0", char_offset: 1.5 }, "INVALID_INPUT", "INVALID_TOOL_INPUT"],
    ["query_agent_output", { id: "../secret" }, "INVALID_INPUT", "INVALID_AGENT_OUTPUT_ID"],
    ["query_agent_output", { id: "1-Report/../../x" }, "INVALID_INPUT", "INVALID_AGENT_OUTPUT_ID"],
    ["query_agent_output", { id: "1-Report?q=.a" }, "INVALID_INPUT", "INVALID_AGENT_OUTPUT_ID"],
    ["query_agent_output", { id: "1-Report", path: "a", q: ".a" }, "INVALID_INPUT", "PATH_AND_QUERY"],
    ["query_agent_output", { id: "1-Report", q: "oops" }, "INVALID_INPUT", "INVALID_QUERY"],
    ["query_agent_output", { id: "1-Report", q: ".a", offset: 1 }, "INVALID_INPUT", "PAGING_WITH_EXTRACTION"],
    ["query_agent_output", { id: "1-Report", path: "nope" }, "NOT_FOUND", "JSON_PATH_NOT_FOUND"],
    ["search_session", { text: "" }, "INVALID_INPUT", "INVALID_TOOL_INPUT"],
    ["search_session", { text: "x".repeat(257) }, "INVALID_INPUT", "INVALID_TOOL_INPUT"],
    ["search_session", { text: "a", limit: 101 }, "INVALID_INPUT", "INVALID_TOOL_INPUT"],
    ["artifacts_get", { artifact_id: "../etc/passwd" }, "INVALID_INPUT", undefined],
    ["artifacts_get", { artifact_id: "A".repeat(64) }, "INVALID_INPUT", undefined],
    ["artifacts_get", { artifact_id: "a".repeat(64), extra: 1 }, "INVALID_INPUT", undefined],
    ["artifacts_get", { artifact_id: "a".repeat(64) }, "NOT_FOUND", undefined],
    ["upload_artifact", { filePath: "/etc/passwd" }, "FORBIDDEN", "OUTSIDE_ROOT"],
    ["upload_artifact", { filePath: "../../../../etc/passwd" }, "FORBIDDEN", "OUTSIDE_ROOT"],
    ["upload_artifact", { filePath: "a\u0000.png" }, "INVALID_INPUT", "INVALID_PATH"],
    ["upload_artifact", { filePath: "." }, "FORBIDDEN", "OUTSIDE_ROOT"],
    ["upload_artifact", { filePath: "shot.png", filename: "../x.png" }, "INVALID_INPUT", "INVALID_FILENAME"],
    [
      "upload_artifact",
      { filePath: "shot.png", filename: ".hidden.png" },
      "INVALID_INPUT",
      "INVALID_FILENAME",
    ],
    [
      "upload_artifact",
      { filePath: "shot.png", filename: "shot.exe" },
      "INVALID_INPUT",
      "FILE_TYPE_NOT_ALLOWED",
    ],
    // Planted in the workspace below: a FIFO (its open would wait forever), a hard link to a host
    // file (realpath cannot see it), a directory, a device through a link.
    ["upload_artifact", { filePath: "pipe.txt" }, "FORBIDDEN", "NOT_A_REGULAR_FILE"],
    ["upload_artifact", { filePath: "linked.txt" }, "FORBIDDEN", "HARD_LINKED"],
    ["upload_artifact", { filePath: "folder" }, "FORBIDDEN", "NOT_A_REGULAR_FILE"],
    ["upload_artifact", { filePath: "out-dir/host-secret.txt" }, "FORBIDDEN", "SYMLINK_REFUSED"],
    ["upload_artifact", { filePath: "/dev/zero" }, "FORBIDDEN", "OUTSIDE_ROOT"],
    ["rm_rf", {}, "INVALID_INPUT", "UNKNOWN_TOOL"],
  ] as const)("%s %j is %s", async (name, args, code, reason) => {
    const result = await client
      .callTool({ name, arguments: args as Record<string, unknown> })
      .catch((err) => err);
    const err = await expectStowageError(stowageErrorOf(Promise.resolve(result)), code, reason);
    expectShortMessage(err.message);
    // What the model reads, when the error is a tool result.
    if (!(result instanceof Error)) expectShortMessage((result.content as { text: string }[])[0]!.text);
  });

  it.each([
    ["a deep id", "read_artifact", { id: deep(DEEP) }, "INVALID_TOOL_INPUT"],
    [
      "a 5,000-character unknown key",
      "read_artifact",
      { id: "0", ["k".repeat(5000)]: 1 },
      "INVALID_TOOL_INPUT",
    ],
    [
      "2,000 unknown keys",
      "read_artifact",
      Object.fromEntries(Array.from({ length: 2000 }, (_, n) => [`key${n}`, deep(50)])),
      "INVALID_TOOL_INPUT",
    ],
    ["a deep query", "query_agent_output", { id: "1-Report", q: deep(DEEP) }, "INVALID_TOOL_INPUT"],
    ["a text array", "search_session", { text: ["needle", "x".repeat(10_000)] }, "INVALID_TOOL_INPUT"],
    ["a deep artifact_id", "artifacts_get", { artifact_id: deep(DEEP) }, undefined],
    [
      "a 5,000-character unknown key",
      "artifacts_get",
      { artifact_id: "a".repeat(64), ["k".repeat(5000)]: 1 },
      undefined,
    ],
  ] as const)("%s in %s is INVALID_INPUT in one short line", async (_why, name, args, reason) => {
    const result = await client.callTool({ name, arguments: args as Record<string, unknown> });
    const err = await expectStowageError(stowageErrorOf(Promise.resolve(result)), "INVALID_INPUT", reason);
    expectShortMessage(err.message);
    expectShortMessage((result.content as { text: string }[])[0]!.text);
    expect(JSON.stringify(result).length).toBeLessThan(2000);
  });

  it("refuses a link out of the workspace", async () => {
    await symlink("/etc/hostname", join(fixture.workspace, "host.txt"));
    await expectStowageError(
      stowageErrorOf(client.callTool({ name: "upload_artifact", arguments: { filePath: "host.txt" } })),
      "FORBIDDEN",
      "SYMLINK_REFUSED",
    );
  });

  it("answers an unknown tool with an MCP error carrying a code, its message prefixed once", async () => {
    const err = await client.callTool({ name: "rm_rf", arguments: {} }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.message).toMatch(/^MCP error -32602: no tool "rm_rf"/);
    expect(err?.message).not.toMatch(/MCP error.*MCP error/);
    const read = await client.readResource({ uri: "artifact://../x" }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(read?.message).not.toMatch(/MCP error.*MCP error/);
  });
});

/**
 * Requests whose params do not fit the method's schema, refused before any handler runs: -32602
 * (InvalidParams), a message of one line. Deep values are `depth` levels deep.
 */
const hostileRequestParams = (depth: number): [string, string, Record<string, unknown>][] => [
  ["a deep uri", "resources/read", { uri: deep(depth) }],
  ["a numeric uri", "resources/read", { uri: 7 }],
  ["a null uri", "resources/read", { uri: null }],
  ["no uri", "resources/read", {}],
  ["a uri array", "resources/read", { uri: ["artifact://0", "x".repeat(10_000)] }],
  ["a deep uri", "resources/subscribe", { uri: deep(depth) }],
  ["no uri", "resources/unsubscribe", { other: "x".repeat(10_000) }],
  ["a deep cursor", "resources/list", { cursor: deep(depth) }],
  ["a numeric cursor", "resources/templates/list", { cursor: 1 }],
  ["a deep cursor", "tools/list", { cursor: deep(depth) }],
  ["a deep tool name", "tools/call", { name: deep(depth) }],
  ["no tool name", "tools/call", { arguments: { id: "0" } }],
  ["string arguments", "tools/call", { name: "read_artifact", arguments: "id=0" }],
  ["array arguments", "tools/call", { name: "read_artifact", arguments: ["0"] }],
];

/** The same server over the SDK's Streamable HTTP client, as the app serves it. */
async function connectOverHttp(): Promise<Client> {
  const sessions = createMcpHttpSessions();
  afterAll(() => sessions.close());
  const transport = new StreamableHTTPClientTransport(new URL("http://stowage.test/mcp"), {
    fetch: async (input, init) =>
      sessions.handle(new Request(input, init), {
        owner: "user:alice",
        scope: SESSION_ID,
        createServer: async () => createStowageMcpServer(fixture.options),
      }),
  });
  const http = new Client({ name: "hostile-http", version: "1.0.0" });
  await http.connect(transport);
  afterAll(() => http.close());
  return http;
}
const httpClient = await connectOverHttp();

// Over HTTP a body nested deeper than any request is refused as it is read (400, before JSON-RPC):
// the rows there nest as deep as a body may, so their params reach the schema check.
describe.each([
  ["in memory", client, DEEP],
  ["over Streamable HTTP", httpClient, 60],
] as const)("hostile request params (%s)", (_transport, hostileClient, depth) => {
  it.each(hostileRequestParams(depth))(
    "%s in %s is -32602 with a short message",
    async (_why, method, params) => {
      const err = await hostileClient.request({ method, params } as never, ResultSchema).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(McpError);
      expect((err as McpError).code).toBe(ErrorCode.InvalidParams);
      expectShortMessage((err as McpError).message);
      expect(JSON.stringify((err as McpError).data ?? null).length).toBeLessThan(600);
      // The session still answers.
      expect((await hostileClient.listTools()).tools.length).toBeGreaterThan(0);
    },
  );
});

describe("hostile resources/list cursors", () => {
  const encoded = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  it.each([
    ["not base64 JSON", "garbage!"],
    ["an unknown kind", encoded({ kind: "passwd" })],
    ["an extra field", encoded({ kind: "artifact", after: "1", extra: 1 })],
    ["an oversized position", encoded({ kind: "agent", after: "a".repeat(300) })],
    ["not canonical", `${encoded({ kind: "artifact" })}==`],
    ["huge", "A".repeat(100_000)],
  ])("refuses %s", async (_why, cursor) => {
    await expectStowageError(
      stowageErrorOf(client.listResources({ cursor })),
      "INVALID_INPUT",
      "INVALID_CURSOR",
    );
  });
});

describe("ownership", () => {
  it("does not reach another principal's blob, even by its exact hash", async () => {
    const shared = createMemoryObjectStore();
    const blobs = createBlobStore({ store: shared, prefix: "blobs/" });
    const alice = createOwnedBlobStore({ blobs, owner: "user:alice", marks: shared, prefix: "blob-owners/" });
    const bob = createOwnedBlobStore({ blobs, owner: "user:bob", marks: shared, prefix: "blob-owners/" });
    const bobs = await bob.put(new TextEncoder().encode("bob's secret"));
    const mine = await alice.put(PNG_BYTES);
    const own = await connectInMemory({ ...fixture.options, blobs: alice });
    try {
      expect((await own.client.readResource({ uri: mine.ref })).contents[0]).toMatchObject({
        mimeType: "image/png",
      });
      await expectStowageError(stowageErrorOf(own.client.readResource({ uri: bobs.ref })), "NOT_FOUND");
    } finally {
      await own.close();
    }
  });
});
