import { createHash, randomUUID } from "node:crypto";
import { context, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { errorCode, startTestApp, type TestApp } from "../support/test-app.js";

// The app ships only @opentelemetry/api; here the test is the host that brings an SDK (a tracer
// provider with an in-memory exporter, and a context manager so that children find their parent),
// as an operator's would. Attribute names are the OpenTelemetry semantic conventions' own:
// HTTP server spans (`http.request.method`, `http.route`, `http.response.status_code`), and the
// GenAI conventions' `gen_ai.conversation.id` for the conversation a session is.
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const contextManager = new AsyncLocalStorageContextManager();

/** Spans the exporter got; a server span ends as its answer leaves, so wait (bounded) for it. */
async function spansUntil(found: (spans: ReadableSpan[]) => boolean): Promise<ReadableSpan[]> {
  for (let i = 0; i < 100; i++) {
    const spans = exporter.getFinishedSpans();
    if (found(spans)) return spans;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return exporter.getFinishedSpans();
}

const isServer = (span: ReadableSpan) => span.kind === SpanKind.SERVER;

async function serverSpan(method: string, route: string): Promise<ReadableSpan> {
  const name = `${method} ${route}`;
  const spans = await spansUntil((all) => all.some((span) => isServer(span) && span.name === name));
  const span = spans.find((one) => isServer(one) && one.name === name);
  expect(span, `a server span named ${name}`).toBeDefined();
  return span!;
}

/** The store operations made while answering `request` (its children in the trace). */
function childrenOf(request: ReadableSpan, spans = exporter.getFinishedSpans()): ReadableSpan[] {
  return spans.filter(
    (span) =>
      span.parentSpanContext?.spanId === request.spanContext().spanId &&
      span.spanContext().traceId === request.spanContext().traceId,
  );
}

describe("traces through @opentelemetry/api, seen by a host's SDK", () => {
  let app: TestApp;
  let key: string;
  let sessionId: string;

  beforeAll(async () => {
    context.setGlobalContextManager(contextManager.enable());
    trace.setGlobalTracerProvider(provider);
    app = await startTestApp({ ARTIFACT_MAX_TOTAL_SIZE_MB: "0.01" });
    key = await app.keyFor({ kind: "user", id: "traces-tester" });
    sessionId = `traced-${randomUUID()}`;
    expect((await app.call("/agents/sessions", { key, json: { sessionId } })).status).toBe(201);
  });
  afterAll(async () => {
    await app.close();
    trace.disable();
    context.disable();
    await provider.shutdown();
  });
  beforeEach(() => exporter.reset());

  it("one server span per request, named by method and matched route, with its status", async () => {
    const posted = await app.call(`/threads/${sessionId}/main/items`, {
      key,
      json: { content: [{ type: "text", text: "hi" }], metadata: { type: "text" } },
    });
    expect(posted.status).toBe(201);
    const span = await serverSpan("POST", "/threads/:jobId/:alias/items");
    expect(span.attributes).toMatchObject({
      "http.request.method": "POST",
      "http.route": "/threads/:jobId/:alias/items",
      "http.response.status_code": 201,
      "url.path": `/threads/${sessionId}/main/items`,
    });
    expect(span.status.code).not.toBe(SpanStatusCode.ERROR);
    const servers = exporter.getFinishedSpans().filter(isServer);
    expect(servers).toHaveLength(1);
  });

  it("a thread's operations carry session.id and gen_ai.conversation.id (a thread's job is its session)", async () => {
    await app.call(`/threads/${sessionId}/main/items`, {
      key,
      json: { content: [{ type: "text", text: "again" }], metadata: { type: "text" } },
    });
    const request = await serverSpan("POST", "/threads/:jobId/:alias/items");
    expect(request.attributes["session.id"]).toBe(sessionId);
    expect(request.attributes["gen_ai.conversation.id"]).toBe(sessionId);
    const stores = childrenOf(request);
    expect(stores.length).toBeGreaterThan(0);
    for (const store of stores) {
      expect(store.attributes["session.id"]).toBe(sessionId);
      expect(store.attributes["gen_ai.conversation.id"]).toBe(sessionId);
    }
  });

  it("a store operation is a client span, the child of its request's, naming store, backend and operation", async () => {
    await app.call(`/threads/${sessionId}/main/items`, {
      key,
      json: { content: [{ type: "text", text: "stored" }], metadata: { type: "text" } },
    });
    const request = await serverSpan("POST", "/threads/:jobId/:alias/items");
    const put = childrenOf(request).find((span) => span.attributes["stowage.operation"] === "put");
    expect(put, "the item's create-only put in the shared store").toBeDefined();
    expect(put!.kind).toBe(SpanKind.CLIENT);
    expect(put!.name).toBe("shared put");
    // The test app runs on the embedded defaults: the shared store on the file system.
    expect(put!.attributes).toMatchObject({
      "stowage.store": "shared",
      "stowage.backend": "fs",
      "stowage.operation": "put",
    });
    // Inside the request's time.
    const ns = (time: [number, number]) => BigInt(time[0]) * 1_000_000_000n + BigInt(time[1]);
    expect(ns(put!.startTime)).toBeGreaterThanOrEqual(ns(request.startTime) - 1_000_000n);
    expect(ns(put!.endTime)).toBeLessThanOrEqual(ns(request.endTime));
  });

  it("the quota ledger's reservation is traced with its database backend, a refusal as an error", async () => {
    const ask = (fileSize: number) =>
      app.call("/agents/artifacts/upload-url", {
        key,
        json: {
          agentSessionId: sessionId,
          filename: `f-${fileSize}.txt`,
          contentType: "text/plain",
          fileSize,
          sha256: createHash("sha256").update(String(fileSize)).digest("hex"),
        },
      });
    expect((await ask(1_000)).status).toBe(200);
    const granted = await serverSpan("POST", "/agents/*");
    const reserve = childrenOf(granted).find((span) => span.name === "quota reserve");
    expect(reserve?.attributes).toMatchObject({ "stowage.store": "quota", "stowage.backend": "pglite" });
    expect(reserve?.status.code).not.toBe(SpanStatusCode.ERROR);

    exporter.reset();
    const over20k = await ask(20_000);
    expect(await errorCode(over20k)).toBe("QUOTA_EXCEEDED");
    const refused = await serverSpan("POST", "/agents/*");
    expect(refused.attributes["http.response.status_code"]).toBe(over20k.status);
    const over = childrenOf(refused).find((span) => span.name === "quota reserve");
    expect(over?.status.code).toBe(SpanStatusCode.ERROR);
    expect(over?.events.some((event) => event.name === "exception")).toBe(true);
  });

  it("a session route's span and its store operations carry the session", async () => {
    const claimed = await app.call(`/sessions/${sessionId}/hot-state/dispatcher`, { key, method: "POST" });
    expect(claimed.status).toBe(201);
    const request = await serverSpan("POST", "/sessions/:id/hot-state/dispatcher");
    expect(request.attributes).toMatchObject({
      "session.id": sessionId,
      "gen_ai.conversation.id": sessionId,
      "http.response.status_code": 201,
    });
    const stores = childrenOf(request);
    expect(stores.length).toBeGreaterThan(0);
    expect(stores.every((span) => span.attributes["session.id"] === sessionId)).toBe(true);
  });

  it("a request about no session carries no session attributes, nor do its store operations", async () => {
    expect((await app.call("/threads", { key })).status).toBe(200);
    const request = await serverSpan("GET", "/threads");
    expect(request.attributes["session.id"]).toBeUndefined();
    expect(request.attributes["gen_ai.conversation.id"]).toBeUndefined();
    for (const store of childrenOf(request)) expect(store.attributes["session.id"]).toBeUndefined();
  });

  it("a path no route has is one span name, never the path", async () => {
    await app.call(`/nowhere/${randomUUID()}`, { key });
    const request = await serverSpan("GET", "unmatched");
    expect(request.attributes["http.response.status_code"]).toBe(404);
  });

  // Session ids as a client may send them in a path: the span carries the decoded id, or none.
  it.each<[string, string, string | undefined]>([
    ["percent-encoded space", "/threads/a%20b/main", "a b"],
    ["an encoded NUL", "/sessions/a%00b/hot-state", "a\u0000b"],
    ["a truncated escape", "/sessions/%E0%A4%A/hot-state", undefined],
    ["an encoded slash", "/agents/sessions/a%2Fb", "a/b"],
    ["no id at all", "/session-blobs", undefined],
  ])("%s (%s): session.id is %j", async (_name, path, expected) => {
    await app.call(path, { key });
    const spans = await spansUntil((all) => all.some(isServer));
    const request = spans.find(isServer)!;
    expect(request.attributes["url.path"]).toBeDefined();
    expect(request.attributes["session.id"]).toBe(expected);
    expect(request.attributes["gen_ai.conversation.id"]).toBe(expected);
  });
});
