import { randomUUID } from "node:crypto";
import { toolResultItem } from "@stowage/thread-items";
import { Agent, fetch as undiciFetch } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HOT_STATE_JSON_BODY, SMALL_JSON_BODY, THREAD_ITEM_JSON_BODY } from "../src/http/limits.js";
import { startTestApp, type TestApp } from "./support/test-app.js";

// Each route reads its JSON body within the budget of the biggest body it really takes
// (`src/http/limits.ts`), refusing anything past it while it is read, with one code and reason.

// The hot state's schema limits, as @stowage/hot-state's README gives them.
const MAX_ID_CHARS = 256;
const MAX_HOT_STATE_TEXT_CHARS = 2_000;
const MAX_HOT_STATE_LIST_ITEMS = 200;
const MAX_LABEL_CHARS = 200;
const MAX_VERSION_CHARS = 128;
const MAX_CONTENT_SUMMARY_CHARS = 500;

let app: TestApp;
let key: string;
const sessionId = randomUUID();

beforeAll(async () => {
  app = await startTestApp();
  key = await app.keyFor({ kind: "user", id: "budgets" });
  expect((await app.call("/agents/sessions", { key, json: { sessionId } })).status).toBe(201);
});
afterAll(() => app.close());

const send = (method: string, path: string, body: string | Uint8Array) =>
  app.call(path, { key, method, body, headers: { "content-type": "application/json" } });

/** JSON as an `ensure_ascii` encoder writes it (Python's json.dumps): every non-ASCII unit as `\uXXXX`. */
const asciiJson = (value: unknown) =>
  JSON.stringify(value).replace(
    /[\u007f-\uffff]/g,
    (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );

/** A hot state with every field and list at its schema limit, all of its free text CJK. */
function maximalCjkState() {
  const text = (length: number) => "漢".repeat(length);
  const id = (length: number) => "i".repeat(length);
  const list = () => Array.from({ length: MAX_HOT_STATE_LIST_ITEMS }, () => text(MAX_HOT_STATE_TEXT_CHARS));
  return {
    session_id: sessionId,
    session_key: id(MAX_ID_CHARS),
    run_id: id(MAX_ID_CHARS),
    current_plan_id: id(MAX_ID_CHARS),
    objective: text(MAX_HOT_STATE_TEXT_CHARS),
    accepted_decisions: list(),
    open_questions: list(),
    constraints: list(),
    last_successful_step: text(MAX_HOT_STATE_TEXT_CHARS),
    risk_level: "high",
    artifact_index: Array.from({ length: MAX_HOT_STATE_LIST_ITEMS }, (_, i) => ({
      artifact_id: i.toString(16).padStart(64, "0"),
      type: "doc",
      label: text(MAX_LABEL_CHARS),
      version: text(MAX_VERSION_CHARS),
      summary: text(MAX_CONTENT_SUMMARY_CHARS),
    })),
  };
}

describe("the biggest legitimate bodies fit their budgets", () => {
  it("a maximal hot state, every character of its text escaped (8.2 MB), is taken", async () => {
    const body = asciiJson({ expected_version: 0, state: maximalCjkState() });
    expect(body.length).toBeGreaterThan(8_200_000);
    expect(body.length).toBeLessThanOrEqual(HOT_STATE_JSON_BODY.maxBytes);
    const written = await send("PUT", `/sessions/${sessionId}/hot-state`, body);
    expect(written.status, await written.clone().text()).toBe(201);
    expect(await written.json()).toMatchObject({ version: 1, minimal: true });
  });

  it("a 5 MB tool output in a thread item is taken: an item is stored whole before it is fitted", async () => {
    const output = `${"0123456789abcdef".repeat(64)}\n`.repeat(5_000);
    const item = toolResultItem({ id: "big", invocationId: "t1", output });
    const posted = await send("POST", "/threads/budgets/main/items", JSON.stringify(item));
    expect(posted.status, await posted.clone().text()).toBe(201);
  });
});

describe("bodies past their route's budget are refused while they are read", () => {
  const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;
  const values = (count: number) => `[${"0,".repeat(count - 1)}0]`;
  it.each([
    [
      "a registration 9 levels deep",
      "POST",
      "/agents/sessions",
      nested(SMALL_JSON_BODY.maxDepth + 1),
      400,
      "JSON_TOO_DEEP",
    ],
    [
      "a registration over 16 KiB",
      "POST",
      "/agents/sessions",
      `"${"x".repeat(16 * 1024)}"`,
      413,
      "JSON_TOO_LARGE",
    ],
    [
      "artifacts_get with 65 values",
      "POST",
      "/context/tools/artifacts_get",
      values(65),
      400,
      "JSON_TOO_MANY_VALUES",
    ],
    ["a hot state 9 levels deep", "PUT", `/sessions/${sessionId}/hot-state`, nested(9), 400, "JSON_TOO_DEEP"],
    [
      "a hot state of 4,097 values",
      "PUT",
      `/sessions/${sessionId}/hot-state`,
      values(4_097),
      400,
      "JSON_TOO_MANY_VALUES",
    ],
    [
      "prompt metrics of 65 values",
      "POST",
      `/sessions/${sessionId}/prompt-metrics`,
      values(65),
      400,
      "JSON_TOO_MANY_VALUES",
    ],
    ["a bootstrap 9 levels deep", "POST", "/context/bootstrap", nested(9), 400, "JSON_TOO_DEEP"],
    [
      "a thread item 65 levels deep",
      "POST",
      "/threads/budgets/main/items",
      nested(THREAD_ITEM_JSON_BODY.maxDepth + 1),
      400,
      "JSON_TOO_DEEP",
    ],
    [
      "a thread item of 100,001 values",
      "POST",
      "/threads/budgets/main/items",
      values(100_001),
      400,
      "JSON_TOO_MANY_VALUES",
    ],
    [
      "a session blob's JSON form 9 levels deep",
      "POST",
      "/requests/budgets/session-blobs",
      nested(9),
      400,
      "JSON_TOO_DEEP",
    ],
    ["not JSON", "POST", "/agents/sessions", "{not json", 400, "INVALID_JSON"],
  ])("%s: %s %s", async (_, method, path, body, status, reason) => {
    const refused = await send(method, path, body);
    expect(refused.status).toBe(status);
    expect(await refused.json()).toMatchObject({
      code: status === 413 ? "TOO_LARGE" : "INVALID_INPUT",
      reason,
    });
  });

  it("a session blob's JSON form over STOWAGE_BODY_LIMIT_MB is TOO_LARGE; the raw form is not held to it", async () => {
    const small = await startTestApp({ STOWAGE_BODY_LIMIT_MB: String(64 / 1024) });
    try {
      const smallKey = await small.keyFor({ kind: "user", id: "budgets" });
      const json = await small.call("/requests/big/session-blobs", {
        key: smallKey,
        json: { sessionId: "big-1", sessionBlob: "A".repeat(70 * 1024) },
      });
      expect(json.status).toBe(413);
      expect(await json.json()).toMatchObject({ code: "TOO_LARGE", reason: "JSON_TOO_LARGE" });
    } finally {
      await small.close();
    }
  });
});

describe("the connection after a refused body", () => {
  const item = (
    bytes: Uint8Array | ReadableStream<Uint8Array>,
    agent: Agent,
    path = "/threads/budgets/main/items",
  ) =>
    undiciFetch(`${app.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: bytes as never,
      duplex: "half",
      dispatcher: agent,
    });

  it("is kept when the rest of the body is short (read and dropped), closed when it is long", async () => {
    const agent = new Agent({ connections: 1 });
    try {
      // 20 KiB to a route taking 16 KiB: refused unread, then the 20 KiB are read and dropped.
      const short = await item(new Uint8Array(20 * 1024).fill(0x20), agent, "/agents/sessions");
      expect(short.status).toBe(413);
      expect(short.headers.get("connection")).not.toBe("close");
      await short.arrayBuffer();
      // 17 MiB: not worth reading; the answer says so, and the server closes the connection.
      const long = await item(new Uint8Array(17 * 1024 * 1024).fill(0x20), agent);
      expect(long.status).toBe(413);
      expect(long.headers.get("connection")).toBe("close");
      await long.arrayBuffer();
      const next = await undiciFetch(`${app.url}/healthz`, { dispatcher: agent });
      expect(next.status).toBe(200);
      await next.arrayBuffer();
    } finally {
      await agent.close();
    }
  });

  it("is kept after a 401 on a short body nobody read", async () => {
    const agent = new Agent({ connections: 1 });
    try {
      const refused = await undiciFetch(`${app.url}/agents/sessions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ sessionId: "x".repeat(10_000) }),
        dispatcher: agent,
      });
      expect(refused.status).toBe(401);
      expect(refused.headers.get("connection")).not.toBe("close");
      await refused.arrayBuffer();
      expect((await undiciFetch(`${app.url}/healthz`, { dispatcher: agent })).status).toBe(200);
    } finally {
      await agent.close();
    }
  });
});
