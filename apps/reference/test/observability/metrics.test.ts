import { createHash, randomBytes, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorCode, startTestApp, type TestApp } from "../support/test-app.js";

// GET /metrics from the outside: never public, its own token (never an API key), and the figures
// an operator reads, named as Prometheus' text format names them.
const METRICS_TOKEN = "m".repeat(40);

/** The value of one sample line of the text format (`name{labels} value`), or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split("\n")) {
    const match = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries(
      [...(match[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (Object.entries(labels).every(([key, value]) => found[key] === value)) return Number(match[3]);
  }
  return undefined;
}

describe("GET /metrics without STOWAGE_METRICS_TOKEN", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it("does not exist: 404 NOT_FOUND, with or without an API key", async () => {
    const key = await app.keyFor({ kind: "user", id: "metrics-none" });
    for (const response of [await app.call("/metrics"), await app.call("/metrics", { key })]) {
      expect(response.status).toBe(404);
      expect(await errorCode(response)).toBe("NOT_FOUND");
    }
  });
});

describe("GET /metrics with STOWAGE_METRICS_TOKEN", () => {
  let app: TestApp;
  let key: string;
  const scrape = async () => {
    const response = await app.call("/metrics", { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    return response.text();
  };

  beforeAll(async () => {
    app = await startTestApp({ STOWAGE_METRICS_TOKEN: METRICS_TOKEN, ARTIFACT_MAX_TOTAL_SIZE_MB: "0.01" });
    key = await app.keyFor({ kind: "user", id: "metrics-tester" });
  });
  afterAll(() => app.close());

  it.each<[string, { authorization?: string }]>([
    ["no credentials", {}],
    ["an API key instead of the token", { authorization: "key" }],
    ["a wrong token of the same length", { authorization: `Bearer ${"n".repeat(40)}` }],
    ["the token without Bearer", { authorization: METRICS_TOKEN }],
  ])("refuses %s: 401 UNAUTHORIZED", async (_name, headers) => {
    const sent = headers.authorization === "key" ? { authorization: `Bearer ${key}` } : headers;
    const response = await app.call("/metrics", { headers: sent as Record<string, string> });
    expect(response.status).toBe(401);
    expect(await errorCode(response)).toBe("UNAUTHORIZED");
  });

  it("refuses a token shorter than 32 characters at start-up (INVALID_SETTING)", async () => {
    await expect(startTestApp({ STOWAGE_METRICS_TOKEN: "short" })).rejects.toMatchObject({
      code: "INVALID_INPUT",
      reason: "INVALID_SETTING",
    });
  });

  it("counts requests per method, matched route and status, never per path", async () => {
    const before = await scrape();
    const route = { method: "POST", route: "/threads/:jobId/:alias/items", status: "201" };
    const counted = sample(before, "stowage_http_requests_total", route) ?? 0;
    for (const job of [`job-${randomUUID()}`, `job-${randomUUID()}`]) {
      const posted = await app.call(`/threads/${job}/main/items`, {
        key,
        json: { content: [{ type: "text", text: "hi" }], metadata: { type: "text" } },
      });
      expect(posted.status).toBe(201);
    }
    const after = await scrape();
    expect(sample(after, "stowage_http_requests_total", route)).toBe(counted + 2);
    expect(sample(after, "stowage_http_request_duration_seconds_count", route)).toBe(counted + 2);
    // Neither job id is a label anywhere.
    expect(after).not.toMatch(/route="\/threads\/job-/);
    // A path no route has is one label, whatever the path.
    await app.call(`/nowhere/${randomUUID()}`, { key });
    expect(sample(await scrape(), "stowage_http_requests_total", { route: "unmatched", status: "404" })).toBe(
      1,
    );
  });

  it("measures store operations per store, backend and operation", async () => {
    const text = await scrape();
    expect(
      sample(text, "stowage_store_operation_duration_seconds_count", {
        store: "shared",
        backend: "fs",
        operation: "put",
        outcome: "ok",
      }),
    ).toBeGreaterThan(0);
    expect(text).toContain("# TYPE stowage_store_operation_duration_seconds histogram");
  });

  it("counts quota reservations by outcome: reserved, and refused over the quota", async () => {
    const sessionId = `metrics-${randomUUID()}`;
    expect((await app.call("/agents/sessions", { key, json: { sessionId } })).status).toBe(201);
    const ask = (fileSize: number) =>
      app.call("/agents/artifacts/upload-url", {
        key,
        json: {
          agentSessionId: sessionId,
          filename: `f-${fileSize}.txt`,
          contentType: "text/plain",
          fileSize,
          sha256: createHash("sha256").update(randomBytes(1)).digest("hex"),
        },
      });
    const before = await scrape();
    const reserved = sample(before, "stowage_quota_reservations_total", { outcome: "reserved" }) ?? 0;
    const refused = sample(before, "stowage_quota_reservations_total", { outcome: "refused" }) ?? 0;
    expect((await ask(1_000)).status).toBe(200);
    const over = await ask(20_000);
    expect(await errorCode(over)).toBe("QUOTA_EXCEEDED");
    const after = await scrape();
    expect(sample(after, "stowage_quota_reservations_total", { outcome: "reserved" })).toBe(reserved + 1);
    expect(sample(after, "stowage_quota_reservations_total", { outcome: "refused" })).toBe(refused + 1);
  });

  it("shows the live streams open now: a thread's tail counts while it is open", async () => {
    expect(sample(await scrape(), "stowage_sse_subscribers")).toBe(0);
    const controller = new AbortController();
    const tail = await fetch(`${app.url}/threads/job-${randomUUID()}/main/events`, {
      headers: { authorization: `Bearer ${key}` },
      signal: controller.signal,
    });
    const reader = tail.body!.getReader();
    await reader.read(); // `ready`
    expect(sample(await scrape(), "stowage_sse_subscribers")).toBe(1);
    controller.abort();
    await reader.read().catch(() => {});
    // The server learns of the close when the socket goes: a bounded wait, not a timing assertion.
    for (let i = 0; i < 100 && sample(await scrape(), "stowage_sse_subscribers") !== 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(sample(await scrape(), "stowage_sse_subscribers")).toBe(0);
  });

  it("includes the process's own figures (resident memory) once the route is served", async () => {
    expect(sample(await scrape(), "stowage_process_resident_memory_bytes")).toBeGreaterThan(0);
  });
});
