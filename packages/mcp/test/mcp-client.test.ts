import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { StowageError } from "@stowage/core";
import { expectStowageError } from "@stowage/core/testing";
import { tempDirectory } from "@stowage/test-support";
import { textItem } from "@stowage/thread-items";
import { afterEach, describe, expect, it } from "vitest";
import {
  ALICE,
  connectedFixture,
  connectInMemory,
  PNG_BYTES,
  SESSION_ID,
  sessionFixture,
  stowageErrorOf,
  textOf,
} from "./session-fixture.js";

const base = await tempDirectory("stowage-mcp-client-");
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

const setUp = (overrides = {}) => connectedFixture(base, closers, overrides);

describe("resources", () => {
  it("lists what exists and the templates of every kind", async () => {
    const { client, record } = await setUp();
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual([
      "artifact://0",
      "artifact://1",
      "agent://0-Explore",
      "agent://1-Report",
      "thread://main",
      `content-ref://${record.artifact_id}`,
      "hot-state://latest",
    ]);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual([
      "artifact://{id}{?offset,limit,char_offset}",
      "agent://{id}{?q,offset,limit,char_offset}",
      "blob:sha256:{hex}",
      "thread://{alias}{?cursor,limit}",
      "content-ref://{artifact_id}",
      "hot-state://{version}",
    ]);
  });

  it("reads an artifact whole and by pages", async () => {
    const { client } = await setUp();
    const whole = await client.readResource({ uri: "artifact://0" });
    expect(whole.contents).toEqual([
      { uri: "artifact://0", mimeType: "text/plain", text: "hello from bash\n", _meta: { complete: true } },
    ]);
    const page = await client.readResource({ uri: "artifact://1?offset=101&limit=3" });
    expect(page.contents[0]).toMatchObject({
      text: "line 101\nline 102\nline 103\n",
      _meta: { lines: { first: 101, last: 103, hasMore: true }, next: "artifact://1?offset=104&limit=3" },
    });
    const last = await client.readResource({ uri: "artifact://1?offset=2999" });
    expect(last.contents[0]).toMatchObject({
      text: "line 2999\nline 3000\n",
      _meta: { lines: { first: 2999, last: 3000, hasMore: false, totalLines: 3000 } },
    });
  });

  it("reads agent outputs: markdown, JSON path and query", async () => {
    const { client } = await setUp();
    expect((await client.readResource({ uri: "agent://0-Explore" })).contents[0]).toMatchObject({
      mimeType: "text/markdown",
      text: "# Notes\nthe needle is here\n",
    });
    expect(
      (await client.readResource({ uri: "agent://1-Report/findings/0/file" })).contents[0],
    ).toMatchObject({
      mimeType: "text/plain",
      text: "a.ts",
    });
    expect(
      (await client.readResource({ uri: "agent://1-Report?q=.findings[0].line" })).contents[0],
    ).toMatchObject({
      mimeType: "application/json",
      text: "3",
    });
  });

  it("reads a blob as base64 with its MIME type", async () => {
    const { client, png, text } = await setUp();
    const read = await client.readResource({ uri: png.ref });
    expect(read.contents).toEqual([
      { uri: png.ref, mimeType: "image/png", blob: PNG_BYTES.toString("base64") },
    ]);
    expect(png.ref).toBe(`blob:sha256:${createHash("sha256").update(PNG_BYTES).digest("hex")}`);
    const other = await client.readResource({ uri: text.ref });
    expect(other.contents[0]).toMatchObject({
      mimeType: "application/octet-stream",
      blob: Buffer.from("plain bytes").toString("base64"),
    });
  });

  it("reads a thread's stored items, a page at a time", async () => {
    const { client } = await setUp();
    const read = await client.readResource({ uri: "thread://main" });
    const body = JSON.parse((read.contents[0] as { text: string }).text);
    expect(body).toMatchObject({ jobId: SESSION_ID, alias: "main", status: "active" });
    expect(body.items.map((item: { content: { text: string }[] }) => item.content[0]!.text)).toEqual([
      "first item",
      "second item mentions the needle",
    ]);
    expect(body.items.every((item: { user_id: string }) => item.user_id === "user:alice")).toBe(true);
    const first = JSON.parse(
      ((await client.readResource({ uri: "thread://main?limit=1" })).contents[0] as { text: string }).text,
    );
    expect(first.items).toHaveLength(1);
    expect(first.next).toMatch(/^thread:\/\/main\?cursor=.+&limit=1$/);
    const second = JSON.parse(
      ((await client.readResource({ uri: first.next })).contents[0] as { text: string }).text,
    );
    expect(second.items[0].content[0].text).toBe("second item mentions the needle");
  });

  it("reads a content ref with its record", async () => {
    const { client, record } = await setUp();
    const read = await client.readResource({ uri: `content-ref://${record.artifact_id}` });
    expect(read.contents[0]).toMatchObject({
      mimeType: "text/plain; charset=utf-8",
      text: "# Plan\n\nstep one\n",
      _meta: { record: { artifact_id: record.artifact_id, type: "plan", summary: "the plan" } },
    });
    expect(record.artifact_id).toBe(createHash("sha256").update("# Plan\n\nstep one\n").digest("hex"));
  });

  it("reads the stored hot state, latest and by version", async () => {
    const { client, dispatcher } = await setUp();
    const latest = JSON.parse(
      ((await client.readResource({ uri: "hot-state://latest" })).contents[0] as { text: string }).text,
    );
    expect(latest).toMatchObject({
      sessionId: SESSION_ID,
      version: 1,
      previousHash: null,
      state: { session_id: SESSION_ID, objective: "Ship the MCP server" },
    });
    await dispatcher.update((state) => ({ ...state, accepted_decisions: ["expose it as a resource"] }));
    const second = JSON.parse(
      ((await client.readResource({ uri: "hot-state://latest" })).contents[0] as { text: string }).text,
    );
    expect(second).toMatchObject({
      version: 2,
      previousHash: latest.hash,
      state: { accepted_decisions: ["expose it as a resource"] },
    });
    const first = JSON.parse(
      ((await client.readResource({ uri: "hot-state://1" })).contents[0] as { text: string }).text,
    );
    expect(first.hash).toBe(latest.hash);
    await expectStowageError(
      stowageErrorOf(client.readResource({ uri: "hot-state://3" })),
      "NOT_FOUND",
      "HOT_STATE_NOT_FOUND",
    );
  });

  it("answers NOT_FOUND for what does not exist", async () => {
    const { client } = await setUp();
    const missing = `blob:sha256:${"0".repeat(64)}`;
    await expectStowageError(
      stowageErrorOf(client.readResource({ uri: "artifact://7" })),
      "NOT_FOUND",
      "ARTIFACT_NOT_FOUND",
    );
    await expectStowageError(
      stowageErrorOf(client.readResource({ uri: "agent://9-Nope" })),
      "NOT_FOUND",
      "AGENT_OUTPUT_NOT_FOUND",
    );
    await expectStowageError(
      stowageErrorOf(client.readResource({ uri: missing })),
      "NOT_FOUND",
      "BLOB_NOT_FOUND",
    );
    await expectStowageError(
      stowageErrorOf(client.readResource({ uri: "thread://other" })),
      "NOT_FOUND",
      "THREAD_NOT_FOUND",
    );
    await expectStowageError(
      stowageErrorOf(client.readResource({ uri: `content-ref://${"a".repeat(64)}` })),
      "NOT_FOUND",
      "CONTENT_REF_NOT_FOUND",
    );
  });

  it("offers only the kinds it was given", async () => {
    const fixture = await sessionFixture(base);
    const { blobs: _b, threads: _t, registry: _r, uploads: _u, hotState: _h, ...bare } = fixture.options;
    const { client, close } = await connectInMemory(bare);
    closers.push(close);
    expect((await client.listResourceTemplates()).resourceTemplates.map((t) => t.name)).toEqual([
      "artifact",
      "agent",
    ]);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual([
      "read_artifact",
      "query_agent_output",
      "search_session",
    ]);
    await expectStowageError(
      stowageErrorOf(client.readResource({ uri: fixture.png.ref })),
      "NOT_FOUND",
      "NOT_OFFERED",
    );
  });
});

describe("tools", () => {
  it("lists every tool with its input schema", async () => {
    const { client } = await setUp();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual([
      "read_artifact",
      "query_agent_output",
      "search_session",
      "artifacts_get",
      "upload_artifact",
    ]);
    const artifactsGet = tools.find((t) => t.name === "artifacts_get")!;
    expect(artifactsGet.inputSchema).toMatchObject({
      type: "object",
      properties: { artifact_id: { type: "string", pattern: "^[a-f0-9]{64}$" }, offset: { type: "integer" } },
      required: ["artifact_id"],
      additionalProperties: false,
    });
    expect(tools.find((t) => t.name === "read_artifact")!.inputSchema).toMatchObject({
      type: "object",
      required: ["id"],
      additionalProperties: false,
    });
  });

  it("read_artifact pages by lines and says how to read on", async () => {
    const { client } = await setUp();
    const result = await client.callTool({
      name: "read_artifact",
      arguments: { id: "1", offset: 10, limit: 2 },
    });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe(
      "line 10\nline 11\n\n[artifact://1: lines 10–11; more: call read_artifact again with offset=12]",
    );
    expect(result.structuredContent).toMatchObject({
      lines: { first: 10, last: 11, hasMore: true },
      next_offset: 12,
    });
    // A number id (as models send) and the default page of 500 lines.
    const first = await client.callTool({ name: "read_artifact", arguments: { id: 1 } });
    expect(first.structuredContent).toMatchObject({
      lines: { first: 1, last: 500, hasMore: true },
      next_offset: 501,
    });
    const end = await client.callTool({ name: "read_artifact", arguments: { id: 0 } });
    expect(textOf(end)).toBe("hello from bash\n\n[artifact://0: lines 1–1 of 1, end]");
  });

  it("query_agent_output reads by path, by query and whole", async () => {
    const { client } = await setUp();
    const byPath = await client.callTool({
      name: "query_agent_output",
      arguments: { id: "1-Report", path: "findings/0/file" },
    });
    expect(textOf(byPath)).toBe("a.ts");
    const byQuery = await client.callTool({
      name: "query_agent_output",
      arguments: { id: "1-Report", q: '.["odd key"]' },
    });
    expect(textOf(byQuery)).toBe("value");
    const whole = await client.callTool({ name: "query_agent_output", arguments: { id: "0-Explore" } });
    expect(textOf(whole)).toBe("# Notes\nthe needle is here\n\n[agent://0-Explore: lines 1–2 of 2, end]");
  });

  it("search_session finds text in artifacts, agent outputs and thread items", async () => {
    const { client } = await setUp();
    const result = await client.callTool({ name: "search_session", arguments: { text: "NEEDLE" } });
    const { matches, complete } = result.structuredContent as {
      matches: { uri: string; line?: number }[];
      complete: boolean;
    };
    expect(complete).toBe(true);
    expect(matches.map((m) => [m.uri, m.line])).toEqual([
      ["agent://0-Explore", 2],
      ["thread://main", undefined],
    ]);
    const many = await client.callTool({ name: "search_session", arguments: { text: "line 1", limit: 5 } });
    expect(many.structuredContent).toMatchObject({ complete: false, stopped: "limit" });
    expect((many.structuredContent as { matches: unknown[] }).matches).toHaveLength(5);
    expect(textOf(many)).toContain("[stopped at 5 matches");
  });

  it("artifacts_get returns hot-state's page of a content ref", async () => {
    const { client, record } = await setUp();
    const result = await client.callTool({
      name: "artifacts_get",
      arguments: { artifact_id: record.artifact_id },
    });
    expect(textOf(result)).toBe("# Plan\n\nstep one\n");
    expect(result.structuredContent).toMatchObject({
      artifact_id: record.artifact_id,
      type: "plan",
      total_chars: 17,
      next_offset: null,
      encoding: "utf-8",
    });
    const paged = await client.callTool({
      name: "artifacts_get",
      arguments: { artifact_id: record.artifact_id, offset: 8 },
    });
    expect(textOf(paged)).toBe("step one\n");
  });

  it("upload_artifact puts a workspace file through the upload flow", async () => {
    const { client, service } = await setUp();
    const result = await client.callTool({ name: "upload_artifact", arguments: { filePath: "shot.png" } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({
      filename: "shot.png",
      size: PNG_BYTES.byteLength,
      key: `sessions/user/alice/${SESSION_ID}/artifacts/shot.png`,
      sha256: createHash("sha256").update(PNG_BYTES).digest("hex"),
    });
    const listed = await service.listUploads(ALICE, SESSION_ID);
    expect(listed.map((u) => [u.filename, u.size])).toEqual([["shot.png", PNG_BYTES.byteLength]]);
  });

  it("upload_artifact applies the policy and the quota", async () => {
    const { client, workspace } = await setUp();
    await import("node:fs/promises").then((fs) => fs.writeFile(join(workspace, "run.exe"), "MZ"));
    await expectStowageError(
      stowageErrorOf(client.callTool({ name: "upload_artifact", arguments: { filePath: "run.exe" } })),
      "INVALID_INPUT",
      "FILE_TYPE_NOT_ALLOWED",
    );
    await expectStowageError(
      stowageErrorOf(client.callTool({ name: "upload_artifact", arguments: { filePath: "missing.png" } })),
      "NOT_FOUND",
    );
  });
});

describe("subscriptions", () => {
  it("notifies when a subscribed artifact completes", async () => {
    const { client, session } = await setUp();
    const updated: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updated.push(n.params.uri);
    });
    const writer = await session.artifacts.openArtifactWriter("bash");
    const uri = `artifact://${writer.id}`;
    await client.subscribeResource({ uri });
    await expectStowageError(
      stowageErrorOf(client.readResource({ uri })),
      "UNAVAILABLE",
      "ARTIFACT_INCOMPLETE",
    );
    await writer.write(new TextEncoder().encode("done\n"));
    await writer.publish();
    await expect.poll(() => updated, { timeout: 30_000 }).toEqual([uri]);
    expect((await client.readResource({ uri })).contents[0]).toMatchObject({ text: "done\n" });
    await client.unsubscribeResource({ uri });
  });

  it("notifies when a subscribed thread grows", async () => {
    const { client, threads, thread } = await setUp();
    const updated: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updated.push(n.params.uri);
    });
    await client.subscribeResource({ uri: "thread://main" });
    await threads.post(thread, textItem("third"), { author: "user:alice" });
    await expect.poll(() => updated, { timeout: 30_000 }).toEqual(["thread://main"]);
    await client.unsubscribeResource({ uri: "thread://main" });
    await threads.post(thread, textItem("fourth"), { author: "user:alice" });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(updated).toEqual(["thread://main"]);
  });

  it("notifies when the hot state gets a new version", async () => {
    const { client, dispatcher } = await setUp();
    const updated: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updated.push(n.params.uri);
    });
    await client.subscribeResource({ uri: "hot-state://latest" });
    await dispatcher.update((state) => ({ ...state, risk_level: "low" }));
    await expect.poll(() => updated, { timeout: 30_000 }).toEqual(["hot-state://latest"]);
  });

  it("refuses to subscribe to a hostile URI", async () => {
    const { client } = await setUp();
    await expectStowageError(
      stowageErrorOf(client.subscribeResource({ uri: "artifact://../x" })),
      "INVALID_INPUT",
    );
    await expectStowageError(
      stowageErrorOf(client.subscribeResource({ uri: "thread://../x" })),
      "INVALID_INPUT",
    );
  });
});

it("keeps server paths out of errors when told to", async () => {
  const fixture = await sessionFixture(base);
  const { client, close } = await connectInMemory({ ...fixture.options, redactPaths: [fixture.root] });
  closers.push(close);
  const err = await expectStowageError(
    stowageErrorOf(client.callTool({ name: "upload_artifact", arguments: { filePath: "missing.png" } })),
    "NOT_FOUND",
  );
  expect(JSON.stringify(err)).not.toContain(fixture.root);
  expect(await readFile(join(fixture.workspace, "shot.png"))).toEqual(PNG_BYTES);
  expect(StowageError.is(err)).toBe(true);
});
