import { randomUUID } from "node:crypto";
import { createOutputSink } from "@stowage/artifacts";
import { toolCallItem, toolResultItem } from "@stowage/thread-items";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoScreenshot } from "../src/demo/screenshot.js";
import { errorCode, startTestApp, type TestApp } from "./support/test-app.js";

let app: TestApp;
let key: string;

beforeAll(async () => {
  app = await startTestApp();
  key = await app.keyFor({ kind: "user", id: "tester" });
});
afterAll(() => app.close());

describe("threads", () => {
  const thread = `/threads/job-${randomUUID().slice(0, 8)}/main`;

  it("posts items (logged in full, fitted to the budget) and reads them folded", async () => {
    expect(
      (
        await app.call(`${thread}/items`, {
          key,
          json: toolCallItem({ name: "Bash", invocationId: "c1", input: { command: "npm test" } }),
        })
      ).status,
    ).toBe(201);
    const output = Array.from({ length: 60_000 }, (_, i) => `line ${i}`).join("\n");
    const posted = await app.call(`${thread}/items`, {
      key,
      json: toolResultItem({ invocationId: "c1", output }),
    });
    expect(posted.status).toBe(201);
    const { item } = (await posted.json()) as {
      item: { id: string; metadata: { truncated: boolean; local_log: string; tool: { output: string } } };
    };
    expect(item.metadata.truncated).toBe(true);
    expect(item.metadata.tool.output).not.toContain("line 30000\n");

    const read = (await (await app.call(thread, { key })).json()) as {
      entries: { kind: string; name?: string }[];
    };
    expect(read.entries).toEqual([
      expect.objectContaining({ kind: "tool", name: "Bash", invocationId: "c1" }),
    ]);

    const full = (await (await app.call(`${thread}/items/${item.id}/full`, { key })).json()) as {
      item: { metadata: { tool: { output: string } } };
    };
    expect(full.item.metadata.tool.output).toBe(output);
    const listed = (await (await app.call("/threads", { key })).json()) as {
      threads: { jobId: string; alias: string; status: string }[];
    };
    expect(listed.threads).toContainEqual({ jobId: thread.split("/")[2], alias: "main", status: "active" });
  });

  it("tails a thread live over server-sent events", async () => {
    const controller = new AbortController();
    const response = await fetch(`${app.url}${thread}/events`, {
      headers: { authorization: `Bearer ${key}` },
      signal: controller.signal,
    });
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let received = "";
    const until = async (text: string) => {
      while (!received.includes(text)) received += (await reader.read()).value ?? "";
    };
    await until("event: ready");
    await app.call(`${thread}/items`, { key, json: { content: [{ type: "text", text: "live!" }] } });
    await until("live!");
    expect(received).toMatch(/event: item\ndata: \{.*"live!"/);
    controller.abort();
  });

  it.each([
    ["an item without content", {}],
    ["an unknown metadata type", { content: [{ type: "text", text: "x" }], metadata: { type: "nope" } }],
    [
      "a tool call without an invocation id",
      { content: [{ type: "text", text: "x" }], metadata: { type: "tool_call", tool: { name: "Bash" } } },
    ],
  ])("refuses %s", async (_why, item) => {
    const response = await app.call(`${thread}/items`, { key, json: item });
    expect(response.status).toBe(400);
    expect(await errorCode(response)).toBe("INVALID_INPUT");
  });

  it("refuses hostile job ids and aliases", async () => {
    for (const path of [
      "/threads/..%2F..%2Fetc/main",
      "/threads/job/.hidden",
      "/threads/job/a%00b",
      "/threads/%2e%2e/x",
    ]) {
      const response = await app.call(`${path}/items`, {
        key,
        json: { content: [{ type: "text", text: "x" }] },
      });
      expect([400, 404]).toContain(response.status);
    }
  });
});

describe("blobs", () => {
  it("stores bytes once and serves them back verified, with their image type", async () => {
    const png = demoScreenshot();
    const first = await app.call("/blobs", {
      key,
      body: png,
      headers: { "content-type": "application/octet-stream" },
    });
    expect(first.status).toBe(201);
    const { ref, hash, created } = (await first.json()) as { ref: string; hash: string; created: boolean };
    expect(created).toBe(true);
    const again = await app.call("/blobs", {
      key,
      body: png,
      headers: { "content-type": "application/octet-stream" },
    });
    expect(again.status).toBe(200);
    for (const id of [hash, ref]) {
      const got = await app.call(`/blobs/${id}`, { key });
      expect(got.headers.get("content-type")).toBe("image/png");
      expect(Buffer.from(await got.arrayBuffer()).equals(png)).toBe(true);
    }
  });

  it("refuses hostile ids and answers 404 for an unknown blob", async () => {
    for (const id of ["..%2F..%2Fetc%2Fpasswd", "blob:sha256:zz", "A".repeat(64)]) {
      expect((await app.call(`/blobs/${id}`, { key })).status).toBe(400);
    }
    expect((await app.call(`/blobs/${"0".repeat(64)}`, { key })).status).toBe(404);
  });
});

describe("artifact:// and agent:// reads", () => {
  const sessionId = randomUUID();

  beforeAll(async () => {
    const session = await app.server.services
      .tenant({ kind: "user", id: "tester" })
      .agentSessions.create(sessionId);
    const sink = createOutputSink({ artifacts: session.artifacts, toolType: "bash", spillBytes: 1000 });
    for (let i = 1; i <= 5000; i++) await sink.push(`output line ${i}\n`);
    await sink.dump();
    await sink.dispose();
    const { outputId } = await session.artifacts.allocateAgentOutput("Explore");
    await session.artifacts.writeAgentOutput(
      outputId,
      JSON.stringify({ findings: [{ file: "a.ts", line: null }] }),
    );
  });

  it("lists sessions and their artifacts", async () => {
    const { sessions } = (await (await app.call("/sessions", { key })).json()) as {
      sessions: { sessionId: string }[];
    };
    expect(sessions.map((s) => s.sessionId)).toContain(sessionId);
    const detail = (await (await app.call(`/sessions/${sessionId}`, { key })).json()) as {
      artifacts: { id: string }[];
      agentOutputs: unknown[];
    };
    expect(detail.artifacts.map((a) => a.id)).toEqual(["0"]);
    expect(detail.agentOutputs).toHaveLength(1);
  });

  it("pages an artifact by lines", async () => {
    const page = (await (
      await app.call(`/sessions/${sessionId}/artifact/0?offset=4999&limit=5`, { key })
    ).json()) as {
      text: string;
      lines: { first: number; last: number; hasMore: boolean };
    };
    expect(page.text).toBe("output line 4999\noutput line 5000\n");
    expect(page.lines).toMatchObject({ first: 4999, last: 5000, hasMore: false });
  });

  it("answers a read as text, with the paging in headers, when asked for ?format=text", async () => {
    const page = await app.call(`/sessions/${sessionId}/artifact/0?offset=4999&limit=5&format=text`, { key });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(await page.text()).toBe("output line 4999\noutput line 5000\n");
    expect(page.headers.get("x-stowage-url")).toBe("artifact://0");
    expect(page.headers.get("x-stowage-complete")).toBe("true");
    expect(page.headers.get("x-stowage-first-line")).toBe("4999");
    expect(page.headers.get("x-stowage-last-line")).toBe("5000");
    expect(page.headers.get("x-stowage-has-more")).toBe("false");
    const output = await app.call(`/sessions/${sessionId}/agent/0-Explore?format=text`, { key });
    expect(output.headers.get("content-type")).toBe("text/markdown; charset=utf-8");
    expect(JSON.parse(await output.text())).toEqual({ findings: [{ file: "a.ts", line: null }] });
    const bad = await app.call(`/sessions/${sessionId}/artifact/0?format=xml`, { key });
    expect(bad.status).toBe(400);
  });

  it("extracts from a subagent output by path and by query", async () => {
    const byPath = await app.call(`/sessions/${sessionId}/agent/0-Explore/findings/0/file`, { key });
    expect(((await byPath.json()) as { text: string }).text).toContain("a.ts");
    const byQuery = await app.call(`/sessions/${sessionId}/agent/0-Explore?q=.findings[0].line`, { key });
    expect(((await byQuery.json()) as { text: string }).text).toContain("null");
    const missing = await app.call(`/sessions/${sessionId}/agent/0-Explore?q=.findings[0].nope`, { key });
    expect(missing.status).toBe(404);
  });

  it.each([
    ["a non-numeric artifact id", "artifact/abc", 400],
    ["an encoded traversal", "artifact/..%2F..%2Fetc", 400],
    ["a missing artifact", "artifact/7", 404],
    ["a missing subagent output", "agent/9-Nope", 404],
    ["paging with extraction", "agent/0-Explore/findings?offset=1", 400],
    ["a bad offset", "artifact/0?offset=-1", 400],
  ])("answers %s with an error", async (_why, path, status) => {
    expect((await app.call(`/sessions/${sessionId}/${path}`, { key })).status).toBe(status);
  });

  it("refuses hostile session ids", async () => {
    for (const id of ["..", "a%00b", "%2e%2e", "a_b"]) {
      expect([400, 404]).toContain((await app.call(`/sessions/${id}/artifact/0`, { key })).status);
    }
    expect((await app.call(`/sessions/${randomUUID()}/artifact/0`, { key })).status).toBe(404);
  });
});

describe("API key records", () => {
  it.each([
    [
      "a principal that is no safe id",
      (record: Record<string, unknown>) => ({ ...record, principal: { kind: "user", id: "../alice" } }),
    ],
    ["another key's id", (record: Record<string, unknown>) => ({ ...record, id: "someoneelse1" })],
    ["no hash", (record: Record<string, unknown>) => ({ ...record, hash: "x" })],
    [
      "a kind that is neither user nor org",
      (record: Record<string, unknown>) => ({ ...record, principal: { kind: "admin", id: "root" } }),
    ],
  ])("a record edited in the store to hold %s never authenticates anyone", async (_why, edit) => {
    const { apiKey, record } = await app.server.services.apiKeys.issue({ kind: "user", id: "edited" });
    const { shared } = app.server.services;
    const stored = JSON.parse(new TextDecoder().decode((await shared.get(`api-keys/${record.id}.json`))!));
    await shared.put(`api-keys/${record.id}.json`, new TextEncoder().encode(JSON.stringify(edit(stored))));
    const response = await app.call("/sessions", { key: apiKey });
    expect(response.status).toBe(422);
    expect(await response.json()).toMatchObject({ code: "INTEGRITY", reason: "CORRUPT_KEY_RECORD" });
  });
});
