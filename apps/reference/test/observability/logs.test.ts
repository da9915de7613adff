import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { jsonLogger, type RequestLogger, withFields } from "../../src/http/request-log.js";
import { type RunningServer, startServer } from "../../src/http/server.js";
import { seedEmbeddedDatabase } from "../support/seed-embedded-database.js";

// The server's request log from the outside: one JSON line per request in pino's shape (the fields
// and `msg` side by side; pino's documented line), its request id the one answered in
// `x-request-id`. The logger the server takes is pino's argument order, so pino itself fits.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

interface Line {
  level: number | string;
  msg: string;
  [field: string]: unknown;
}

async function serve(log: RequestLogger): Promise<{ server: RunningServer; dataDir: string }> {
  const dataDir = await mkdtemp(join(tmpdir(), "stowage-logs-"));
  await seedEmbeddedDatabase(dataDir);
  const config = await loadConfig({ STOWAGE_DATA_DIR: dataDir, STOWAGE_PORT: "0" }, dataDir);
  return { server: await startServer(config, { log }), dataDir };
}

describe("the request log, through a real pino logger", () => {
  const lines: Line[] = [];
  let server: RunningServer;
  let dataDir: string;
  let key: string;
  const requestLines = () => lines.filter((line) => line.msg === "request");

  beforeAll(async () => {
    const log = pino({ base: null }, { write: (line: string) => lines.push(JSON.parse(line) as Line) });
    ({ server, dataDir } = await serve(log));
    key = (await server.services.apiKeys.issue({ kind: "user", id: "logs-tester" })).apiKey;
  });
  afterAll(async () => {
    await server.close();
    await rm(dataDir, { recursive: true, force: true });
  });
  beforeEach(() => {
    lines.length = 0;
  });

  it("one line per request: pino's level 30 (info), msg, method, path, status, duration, principal and the id answered", async () => {
    const response = await fetch(`${server.url}/threads`, { headers: { authorization: `Bearer ${key}` } });
    expect(response.status).toBe(200);
    const id = response.headers.get("x-request-id");
    expect(id).toMatch(UUID);
    const [line, ...more] = requestLines();
    expect(more).toEqual([]);
    expect(line).toMatchObject({
      level: 30,
      msg: "request",
      requestId: id,
      method: "GET",
      path: "/threads",
      status: 200,
      principal: "user:logs-tester",
    });
    expect(typeof line!.time).toBe("number");
    expect(line!.ms).toBeGreaterThanOrEqual(0);
  });

  it("a new id for every request", async () => {
    const ids = new Set<string | null>();
    for (let i = 0; i < 3; i++) ids.add((await fetch(`${server.url}/healthz`)).headers.get("x-request-id"));
    expect(ids.size).toBe(3);
    expect(requestLines().map((line) => line.requestId)).toEqual([...ids]);
  });

  it("never logs the API key, the query string or the body", async () => {
    const secret = "do-not-log-this-body";
    await fetch(`${server.url}/threads/job-1/main/items?token=${secret}`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ content: [{ type: "text", text: secret }], metadata: { type: "text" } }),
    });
    const text = JSON.stringify(lines);
    expect(text).not.toContain(key);
    expect(text).not.toContain(secret);
    expect(requestLines()[0]).toMatchObject({ path: "/threads/job-1/main/items", status: 201 });
  });

  it("a refusal is logged with its status and no principal", async () => {
    const response = await fetch(`${server.url}/threads`, { headers: { authorization: "Bearer nope" } });
    expect(response.status).toBe(401);
    const [line] = requestLines();
    expect(line).toMatchObject({ status: 401, requestId: response.headers.get("x-request-id") });
    expect(line).not.toHaveProperty("principal");
  });

  // What a proxy sends in x-request-id: kept when short and plain, else replaced by a new UUID
  // (the id is echoed in a header and written in every line, so it must not carry anything else).
  it.each<[string, string, "kept" | "replaced"]>([
    ["a proxy's UUID", "0b6c1a52-43f5-4a57-8d5a-4f3a1f0e2c11", "kept"],
    ["dots, colons and underscores", "edge-1:req_42.7", "kept"],
    ["128 characters", "r".repeat(128), "kept"],
    ["129 characters", "r".repeat(129), "replaced"],
    ["a space", "a b", "replaced"],
    ["a quote and braces", '"},{"level":60', "replaced"],
    ["a path", "../../etc/passwd", "replaced"],
    ["markup", "<script>", "replaced"],
    ["percent escapes", "%0a%0d", "replaced"],
  ])("x-request-id with %s is %s", async (_name, sent, fate) => {
    const response = await fetch(`${server.url}/healthz`, { headers: { "x-request-id": sent } });
    const answered = response.headers.get("x-request-id");
    if (fate === "kept") expect(answered).toBe(sent);
    else expect(answered).toMatch(UUID);
    expect(requestLines()[0]!.requestId).toBe(answered);
  });
});

describe("jsonLogger, the server's default", () => {
  it("writes one JSON object per line, pino's field names, errors to the error stream", () => {
    const written: [string, boolean][] = [];
    const log = jsonLogger((line, isError) => written.push([line, isError]));
    log.info({ store: "uploads", removed: 2 }, "swept");
    withFields(log, { requestId: "r-1" }).error({ error: "boom" }, "unhandled error");
    const [[info, infoIsError], [error, errorIsError]] = written as [[string, boolean], [string, boolean]];
    expect(infoIsError).toBe(false);
    expect(errorIsError).toBe(true);
    expect(JSON.parse(info)).toMatchObject({ level: "info", msg: "swept", store: "uploads", removed: 2 });
    expect(JSON.parse(error)).toMatchObject({
      level: "error",
      msg: "unhandled error",
      requestId: "r-1",
      error: "boom",
    });
    expect(new Date(JSON.parse(info).time as string).toISOString()).toBe(JSON.parse(info).time);
  });
});
