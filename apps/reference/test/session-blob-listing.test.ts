// GET /session-blobs: the caller's stored sessions with their agent types, as the viewer lists them.
import { randomUUID } from "node:crypto";
import { toTransport } from "@stowage/sessions";
import { sampleSessionBlob } from "@stowage/sessions/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorCode, startTestApp, type TestApp } from "./support/test-app.js";

let app: TestApp;
let alice: string;
let bob: string;

beforeAll(async () => {
  app = await startTestApp();
  alice = await app.keyFor({ kind: "user", id: "alice" });
  bob = await app.keyFor({ kind: "org", id: "bobs" });
});
afterAll(() => app.close());

interface Listed {
  sessions: {
    sessionId: string;
    requestId: string;
    agentType: string;
    codec: string;
    blobSizeBytes: number;
  }[];
  cursor?: string;
}

const store = async (key: string, requestId: string, agent: "claude-code" | "codex" | "opencode") => {
  const sessionId = agent === "opencode" ? `ses_${randomUUID().replaceAll("-", "")}` : randomUUID();
  const response = await app.call(`/requests/${requestId}/session-blobs`, {
    key,
    json: toTransport(sampleSessionBlob({ sessionId, agent })),
  });
  expect(response.status).toBe(201);
  return sessionId;
};

describe("GET /session-blobs", () => {
  it("lists the caller's stored sessions with their agent types, in the order stored, without blobs", async () => {
    const claude = await store(alice, "req-a", "claude-code");
    const codex = await store(alice, "req-b", "codex");
    const opencode = await store(alice, "req-c", "opencode");
    await store(bob, "req-a", "codex");
    const listed = (await (await app.call("/session-blobs", { key: alice })).json()) as Listed;
    expect(
      listed.sessions.map(({ sessionId, requestId, agentType }) => [sessionId, requestId, agentType]),
    ).toEqual([
      [claude, "req-a", "claude-code"],
      [codex, "req-b", "codex"],
      [opencode, "req-c", "opencode"],
    ]);
    expect(listed.cursor).toBeUndefined();
    for (const session of listed.sessions) expect(session).not.toHaveProperty("sessionBlob");
    const bobs = (await (await app.call("/session-blobs", { key: bob })).json()) as Listed;
    expect(bobs.sessions.map((session) => session.agentType)).toEqual(["codex"]);
  });

  it("pages with limit and cursor", async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = (await (
        await app.call(`/session-blobs?limit=2${cursor ? `&cursor=${cursor}` : ""}`, { key: alice })
      ).json()) as Listed;
      expect(page.sessions.length).toBeLessThanOrEqual(2);
      seen.push(...page.sessions.map((session) => session.agentType));
      cursor = page.cursor;
    } while (cursor);
    expect(seen).toEqual(["claude-code", "codex", "opencode"]);
  });

  it.each([
    ["limit=0", "INVALID_INPUT"],
    ["limit=1001", "INVALID_INPUT"],
    ["limit=-1", "INVALID_INPUT"],
    ["cursor=abc", "INVALID_INPUT"],
    ["cursor=..%2F1", "INVALID_INPUT"],
  ])("refuses %s", async (query, code) => {
    const response = await app.call(`/session-blobs?${query}`, { key: alice });
    expect(response.status).toBe(400);
    expect(await errorCode(response)).toBe(code);
  });

  it("needs a key", async () => {
    expect((await app.call("/session-blobs")).status).toBe(401);
  });
});
