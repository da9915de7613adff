import { randomUUID } from "node:crypto";
import { createOutputSink } from "@stowage/artifacts";
import { compressChunks, toTransport } from "@stowage/sessions";
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

describe("session blobs", () => {
  const sessionId = randomUUID();
  const archive = async () => {
    const raw = new TextEncoder().encode("a session archive, for the API's purposes");
    const blob = await compressChunks("gzip", [raw]);
    return toTransport({ sessionId, codec: "gzip", blob, rawSizeBytes: raw.byteLength });
  };

  it("stores a container's session for a request and returns the latest for the follow-up", async () => {
    const transport = await archive();
    const stored = await app.call("/requests/req-1/session-blobs", {
      key,
      json: { ...transport, agentType: "claude-code" },
    });
    expect(stored.status).toBe(201);
    expect(await stored.json()).toMatchObject({ requestId: "req-1", sessionId, codec: "gzip" });
    const latest = await app.call("/requests/req-1/session-blobs/latest", { key });
    expect(latest.status).toBe(200);
    expect(await latest.json()).toMatchObject({ ...transport, agentType: "claude-code" });
  });

  it.each([
    ["no codec (never guessed)", { sessionBlob: "AAAA", sessionId: randomUUID() }, 400, "INVALID_INPUT"],
    [
      "an unknown codec",
      { sessionBlob: "AAAA", sessionId: randomUUID(), sessionCodec: "lz4", sessionRawSizeBytes: 3 },
      400,
      "INVALID_INPUT",
    ],
    [
      "a session id that is not a UUID",
      { sessionBlob: "AAAA", sessionId: "../x", sessionCodec: "gzip", sessionRawSizeBytes: 3 },
      400,
      "INVALID_INPUT",
    ],
    [
      "a blob that is not base64",
      { sessionBlob: "%%%", sessionId: randomUUID(), sessionCodec: "gzip", sessionRawSizeBytes: 3 },
      400,
      "INVALID_INPUT",
    ],
  ])("refuses %s", async (_why, body, status, code) => {
    const response = await app.call("/requests/req-2/session-blobs", { key, json: body });
    expect(response.status).toBe(status);
    expect(await errorCode(response)).toBe(code);
  });

  it("refuses hostile request ids and answers NOT_FOUND for an unknown request", async () => {
    const transport = await archive();
    for (const requestId of ["..", "a%00b", "%2e%2e"]) {
      const response = await app.call(`/requests/${requestId}/session-blobs`, { key, json: transport });
      expect([400, 404]).toContain(response.status);
    }
    const missing = await app.call("/requests/nobody/session-blobs/latest", { key });
    expect(missing.status).toBe(404);
    expect(await errorCode(missing)).toBe("NOT_FOUND");
  });

  it("deletes a request's sessions", async () => {
    const response = await app.call("/requests/req-1/session-blobs", { key, method: "DELETE" });
    expect(await response.json()).toEqual({ deleted: 1 });
    expect((await app.call("/requests/req-1/session-blobs/latest", { key })).status).toBe(404);
  });

  it("requires a key", async () => {
    expect((await app.call("/requests/req-1/session-blobs/latest")).status).toBe(401);
  });
});

describe("session blob TTL", () => {
  it("stops returning a session once it expires", async () => {
    const short = await startTestApp({ STOWAGE_SESSION_TTL_DAYS: String(1 / 86_400) }); // one second
    try {
      const shortKey = await short.keyFor({ kind: "user", id: "ttl" });
      const raw = new TextEncoder().encode("short-lived");
      const transport = toTransport({
        sessionId: randomUUID(),
        codec: "gzip",
        blob: await compressChunks("gzip", [raw]),
        rawSizeBytes: raw.byteLength,
      });
      expect(
        (await short.call("/requests/ttl/session-blobs", { key: shortKey, json: transport })).status,
      ).toBe(201);
      expect((await short.call("/requests/ttl/session-blobs/latest", { key: shortKey })).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect((await short.call("/requests/ttl/session-blobs/latest", { key: shortKey })).status).toBe(404);
      expect(await short.server.services.sessionBlobs.deleteExpired()).toBe(1);
    } finally {
      await short.close();
    }
  });
});

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
      threads: { jobId: string; items: number }[];
    };
    expect(listed.threads).toContainEqual(expect.objectContaining({ jobId: thread.split("/")[2], items: 2 }));
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
    const session = await app.server.services.agentSessions.create(sessionId);
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
