import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorCode, startTestApp, type TestApp } from "./support/test-app.js";

let app: TestApp;
let alice: string;
let bob: string;
const sessionId = randomUUID();

beforeAll(async () => {
  app = await startTestApp();
  alice = await app.keyFor({ kind: "user", id: "alice" });
  bob = await app.keyFor({ kind: "user", id: "bob" });
  expect((await app.call("/agents/sessions", { key: alice, json: { sessionId } })).status).toBe(201);
});
afterAll(() => app.close());

/** An entry of the metrics log as the app answers it, for the assertions below. */
interface LoggedEntry {
  hot_state_version: number | null;
  record: Record<string, unknown>;
  violations: unknown[];
}

/** A JSON answer, typed for the assertions below. */
const json = async (response: Response) =>
  (await response.json()) as { hash: string; entries: { turn: number }[]; summary: unknown; entry: unknown };

const put = (key: string, id: string, json: unknown) =>
  app.call(`/sessions/${id}/hot-state`, { key, method: "PUT", json });

describe("hot state over HTTP", () => {
  it("writes versions with compare-and-set; reads the latest and any version", async () => {
    const first = await put(alice, sessionId, {
      expected_version: 0,
      state: { session_id: sessionId, objective: "fix the parser" },
    });
    expect(first.status).toBe(201);
    const v1 = await json(first);
    expect(v1).toMatchObject({
      sessionId,
      version: 1,
      previousHash: null,
      state: { objective: "fix the parser" },
    });
    const second = await put(alice, sessionId, {
      expected_version: 1,
      state: {
        session_id: sessionId,
        objective: "fix the parser",
        accepted_decisions: ["allow trailing commas"],
      },
    });
    expect(second.status).toBe(201);
    expect(await second.json()).toMatchObject({ version: 2, previousHash: v1.hash });
    // A dispatcher that read version 1 and missed version 2 gets 409 CONFLICT, and nothing changes.
    const stale = await put(alice, sessionId, { expected_version: 1, state: { session_id: sessionId } });
    expect(stale.status).toBe(409);
    expect(await errorCode(stale)).toBe("CONFLICT");
    const latest = await app.call(`/sessions/${sessionId}/hot-state`, { key: alice });
    expect(await latest.json()).toMatchObject({
      version: 2,
      state: { accepted_decisions: ["allow trailing commas"] },
    });
    const byVersion = await app.call(`/sessions/${sessionId}/hot-state/versions/1`, { key: alice });
    expect(await byVersion.json()).toMatchObject({ version: 1, hash: v1.hash });
    const missing = await app.call(`/sessions/${sessionId}/hot-state/versions/9`, { key: alice });
    expect(missing.status).toBe(404);
  });

  it("records prompt metrics per model call against the latest hot state; series, summary and budget status", async () => {
    const small = await app.call(`/sessions/${sessionId}/prompt-metrics`, {
      key: alice,
      json: {
        system_prompt: "You are the dispatcher.",
        user_prompt: "Run the tests.",
        run_id: "run-1",
        ref_files: 1,
      },
    });
    expect(small.status).toBe(201);
    expect((await json(small)).entry).toMatchObject({
      turn: 1,
      hot_state_version: 2,
      record: {
        session: sessionId,
        run: "run-1",
        sys_chars: 23,
        user_chars: 14,
        ref_files: 1,
        budget_ok: true,
      },
    });
    // About 10,000 tokens of system prompt: over the 8,000-token prompt budget.
    const big = await app.call(`/sessions/${sessionId}/prompt-metrics`, {
      key: alice,
      json: { system_prompt: "word ".repeat(10_000), user_prompt: "Go on." },
    });
    expect((await json(big)).entry).toMatchObject({
      turn: 2,
      record: { budget_ok: false, budget_violations: 1 },
    });
    const series = await json(await app.call(`/sessions/${sessionId}/prompt-metrics`, { key: alice }));
    expect(series.entries.map((entry) => entry.turn)).toEqual([1, 2]);
    expect(series.summary).toMatchObject({ turns: 2, violating_turns: 1, violation_turns: [2] });
    const after = await json(
      await app.call(`/sessions/${sessionId}/prompt-metrics?after_turn=1`, { key: alice }),
    );
    expect(after.entries).toHaveLength(1);
    const budget = await (await app.call(`/sessions/${sessionId}/budget`, { key: alice })).json();
    expect(budget).toMatchObject({
      budget: { maxHotStateTokens: 1000, maxArtifactIndexEntries: 20, maxPromptTokens: 8000 },
      warning_levels: { hot_state_tokens: 800, artifact_index_entries: 15, prompt_tokens: 6000 },
      hot_state: { version: 2, artifact_index_entries: 0 },
      last_turn: { turn: 2 },
      ok: false,
    });
  });

  it("answers 404 for another tenant's session and for a session nobody registered", async () => {
    for (const path of [
      `/sessions/${sessionId}/hot-state`,
      `/sessions/${sessionId}/hot-state/versions/1`,
      `/sessions/${sessionId}/prompt-metrics`,
      `/sessions/${sessionId}/budget`,
    ]) {
      const response = await app.call(path, { key: bob });
      expect(response.status, path).toBe(404);
    }
    expect(
      (await put(bob, sessionId, { expected_version: 2, state: { session_id: sessionId } })).status,
    ).toBe(404);
    const other = await app.call(`/sessions/${sessionId}/prompt-metrics`, {
      key: bob,
      json: { system_prompt: "x", user_prompt: "y" },
    });
    expect(other.status).toBe(404);
    expect((await app.call(`/sessions/${randomUUID()}/hot-state`, { key: alice })).status).toBe(404);
    expect((await app.call(`/sessions/${sessionId}/hot-state`)).status).toBe(401);
  });

  it("gives bob his own hot state and metrics when he registers the same session id; alice's stay as they were", async () => {
    expect((await app.call("/agents/sessions", { key: bob, json: { sessionId } })).status).toBe(201);
    expect((await app.call(`/sessions/${sessionId}/hot-state`, { key: bob })).status).toBe(404);
    expect(
      (await json(await app.call(`/sessions/${sessionId}/prompt-metrics`, { key: bob }))).entries,
    ).toEqual([]);
    expect(
      (
        await put(bob, sessionId, {
          expected_version: 0,
          state: { session_id: sessionId, objective: "bob's" },
        })
      ).status,
    ).toBe(201);
    const hers = await app.call(`/sessions/${sessionId}/hot-state`, { key: alice });
    expect(await hers.json()).toMatchObject({ version: 2, state: { objective: "fix the parser" } });
    expect(
      (await json(await app.call(`/sessions/${sessionId}/prompt-metrics`, { key: alice }))).entries,
    ).toHaveLength(2);
  });

  it("lets only the dispatcher that claimed the session write it; an agent holding the same API key gets 403", async () => {
    const claimed = randomUUID();
    expect((await app.call("/agents/sessions", { key: alice, json: { sessionId: claimed } })).status).toBe(
      201,
    );
    const claim = await app.call(`/sessions/${claimed}/hot-state/dispatcher`, { key: alice, json: {} });
    expect(claim.status).toBe(201);
    const { dispatcher_token } = (await claim.json()) as { dispatcher_token: string };
    expect(dispatcher_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const state = { session_id: claimed, objective: "only the dispatcher writes" };
    // The agent: same principal, another key, no token.
    const agentKey = await app.keyFor({ kind: "user", id: "alice" });
    for (const body of [
      { expected_version: 0, state },
      { expected_version: 0, state, dispatcher_token: "x".repeat(43) },
    ]) {
      const refused = await put(agentKey, claimed, body);
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as { reason?: string }).reason).toBe("NOT_DISPATCHER");
    }
    const written = await put(alice, claimed, { expected_version: 0, state, dispatcher_token });
    expect(written.status).toBe(201);
    const again = await app.call(`/sessions/${claimed}/hot-state/dispatcher`, { key: agentKey, json: {} });
    expect(again.status).toBe(409);
    expect(((await again.json()) as { reason?: string }).reason).toBe("DISPATCHER_CLAIMED");
    // Another principal cannot claim, or see, alice's session.
    expect((await app.call(`/sessions/${claimed}/hot-state/dispatcher`, { key: bob, json: {} })).status).toBe(
      404,
    );
  });

  it("an agent holding the same API key cannot take a claimed session over by deleting it and registering it again", async () => {
    const claimed = randomUUID();
    expect((await app.call("/agents/sessions", { key: alice, json: { sessionId: claimed } })).status).toBe(
      201,
    );
    const claim = await app.call(`/sessions/${claimed}/hot-state/dispatcher`, { key: alice, json: {} });
    const { dispatcher_token } = (await claim.json()) as { dispatcher_token: string };
    const state = { session_id: claimed, objective: "the dispatcher's" };
    expect((await put(alice, claimed, { expected_version: 0, state, dispatcher_token })).status).toBe(201);
    // An upload of the session: refusing the deletion must leave it too.
    const body = new TextEncoder().encode("kept");
    const grant = (await (
      await app.call("/agents/artifacts/upload-url", {
        key: alice,
        json: { agentSessionId: claimed, filename: "kept.txt", contentType: "text/plain", fileSize: 4 },
      })
    ).json()) as { url: string; headers: Record<string, string> };
    expect((await fetch(grant.url, { method: "PUT", headers: grant.headers, body })).status).toBe(200);
    const agentKey = await app.keyFor({ kind: "user", id: "alice" });
    for (const headers of [{}, { "x-stowage-dispatcher-token": "x".repeat(43) }] as Record<
      string,
      string
    >[]) {
      const refused = await app.call(`/agents/sessions/${claimed}`, {
        key: agentKey,
        method: "DELETE",
        headers,
      });
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as { reason?: string }).reason).toBe("NOT_DISPATCHER");
    }
    // Nothing was deleted: registering again changes nothing, the claim and the state stand.
    expect((await app.call("/agents/sessions", { key: agentKey, json: { sessionId: claimed } })).status).toBe(
      200,
    );
    const kept = await app.call(`/sessions/${claimed}/hot-state`, { key: agentKey });
    expect(await kept.json()).toMatchObject({ version: 1, state: { objective: "the dispatcher's" } });
    expect((await put(agentKey, claimed, { expected_version: 1, state })).status).toBe(403);
    expect(
      (await app.call(`/sessions/${claimed}/hot-state/dispatcher`, { key: agentKey, json: {} })).status,
    ).toBe(409);
    expect((await put(alice, claimed, { expected_version: 1, state, dispatcher_token })).status).toBe(201);
    const listed = await app.call(`/agents/${claimed}/artifacts`, { key: agentKey });
    expect(await listed.json()).toEqual({
      artifacts: [expect.objectContaining({ filename: "kept.txt", size: 4 })],
    });
  });

  it("the dispatcher deletes its session with its token; the id registered again starts unclaimed and empty", async () => {
    const claimed = randomUUID();
    await app.call("/agents/sessions", { key: alice, json: { sessionId: claimed } });
    const claim = await app.call(`/sessions/${claimed}/hot-state/dispatcher`, { key: alice, json: {} });
    const { dispatcher_token } = (await claim.json()) as { dispatcher_token: string };
    const state = { session_id: claimed, objective: "before" };
    expect((await put(alice, claimed, { expected_version: 0, state, dispatcher_token })).status).toBe(201);
    const deleted = await app.call(`/agents/sessions/${claimed}`, {
      key: alice,
      method: "DELETE",
      headers: { "x-stowage-dispatcher-token": dispatcher_token },
    });
    expect(deleted.status).toBe(200);
    expect((await app.call(`/sessions/${claimed}/hot-state`, { key: alice })).status).toBe(404);
    expect((await app.call("/agents/sessions", { key: alice, json: { sessionId: claimed } })).status).toBe(
      201,
    );
    expect((await app.call(`/sessions/${claimed}/hot-state`, { key: alice })).status).toBe(404);
    // The old token holds nothing any more; the session is claimed afresh.
    expect((await put(alice, claimed, { expected_version: 0, state, dispatcher_token })).status).toBe(403);
    const again = await app.call(`/sessions/${claimed}/hot-state/dispatcher`, { key: alice, json: {} });
    expect(again.status).toBe(201);
    expect(((await again.json()) as { dispatcher_token: string }).dispatcher_token).not.toBe(
      dispatcher_token,
    );
  });

  it("claiming again with its token confirms the claim; releasing it needs the token", async () => {
    const claimed = randomUUID();
    await app.call("/agents/sessions", { key: alice, json: { sessionId: claimed } });
    const claim = await app.call(`/sessions/${claimed}/hot-state/dispatcher`, { key: alice, json: {} });
    const { dispatcher_token } = (await claim.json()) as { dispatcher_token: string };
    const confirmed = await app.call(`/sessions/${claimed}/hot-state/dispatcher`, {
      key: alice,
      json: { dispatcher_token },
    });
    expect(confirmed.status).toBe(200);
    expect(await confirmed.json()).toEqual({ session_id: claimed, dispatcher_token });
    const agentKey = await app.keyFor({ kind: "user", id: "alice" });
    const release = (headers: Record<string, string>) =>
      app.call(`/sessions/${claimed}/hot-state/dispatcher`, { key: agentKey, method: "DELETE", headers });
    for (const headers of [{}, { "x-stowage-dispatcher-token": "x".repeat(43) }] as Record<
      string,
      string
    >[]) {
      const refused = await release(headers);
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as { reason?: string }).reason).toBe("NOT_DISPATCHER");
    }
    expect((await release({ "x-stowage-dispatcher-token": dispatcher_token })).status).toBe(204);
    // Released: the next dispatcher claims it.
    expect(
      (await app.call(`/sessions/${claimed}/hot-state/dispatcher`, { key: agentKey, json: {} })).status,
    ).toBe(201);
  });

  it("measures a call against the hot-state version it was made with, not whatever is latest when it is logged", async () => {
    const measured = randomUUID();
    expect((await app.call("/agents/sessions", { key: alice, json: { sessionId: measured } })).status).toBe(
      201,
    );
    const v1 = (await (
      await put(alice, measured, { expected_version: 0, state: { session_id: measured } })
    ).json()) as { tokens: number };
    const v2 = (await (
      await put(alice, measured, {
        expected_version: 1,
        state: { session_id: measured, objective: "a much longer objective than version one had at all" },
      })
    ).json()) as { tokens: number };
    expect(v2.tokens).toBeGreaterThan(v1.tokens);
    const post = (json: Record<string, unknown>) =>
      app.call(`/sessions/${measured}/prompt-metrics`, {
        key: alice,
        json: { system_prompt: "You are the dispatcher.", user_prompt: "Go on.", ...json },
      });
    const old = (await (await post({ hot_state_version: 1 })).json()) as { entry: LoggedEntry };
    expect(old.entry).toMatchObject({ hot_state_version: 1, record: { hs_tokens: v1.tokens } });
    const latest = (await (await post({})).json()) as { entry: LoggedEntry };
    expect(latest.entry).toMatchObject({ hot_state_version: 2, record: { hs_tokens: v2.tokens } });
    const none = (await (await post({ hot_state_version: 0 })).json()) as { entry: LoggedEntry };
    expect(none.entry.hot_state_version).toBeNull();
    const missing = await post({ hot_state_version: 9 });
    expect(missing.status).toBe(404);
    expect(await errorCode(missing)).toBe("NOT_FOUND");
  });

  it("records a prompt too long to count on the server as not measured (a violation) instead of counting it", async () => {
    // 1 MiB of one letter: the text that costs a tokenizer most; counting it took about a second.
    const response = await app.call(`/sessions/${sessionId}/prompt-metrics`, {
      key: alice,
      json: { system_prompt: "a".repeat(1024 * 1024), user_prompt: "Go on." },
    });
    expect(response.status).toBe(201);
    const { entry } = (await response.json()) as { entry: LoggedEntry };
    expect(entry.record).toMatchObject({ sys_chars: 1024 * 1024, est_tokens: null, budget_ok: false });
    expect(entry.violations).toMatchObject([
      { field: "maxPromptTokens", kind: "unmeasurable", actual: null },
    ]);
  });

  it("pages the series (limit, next_after_turn) and judges the budget over the whole series, not the last call", async () => {
    const paged = randomUUID();
    expect((await app.call("/agents/sessions", { key: alice, json: { sessionId: paged } })).status).toBe(201);
    const post = (system_prompt: string) =>
      app.call(`/sessions/${paged}/prompt-metrics`, {
        key: alice,
        json: { system_prompt, user_prompt: "go" },
      });
    // Turn 2 is over the 8,000-token prompt budget; the others are small.
    for (const prompt of ["short", "word ".repeat(10_000), "short", "short", "short"]) {
      expect((await post(prompt)).status).toBe(201);
    }
    const page = async (query: string) =>
      (await (await app.call(`/sessions/${paged}/prompt-metrics${query}`, { key: alice })).json()) as {
        entries: { turn: number }[];
        next_after_turn: number | null;
      };
    const pages = [
      await page("?limit=2"),
      await page("?after_turn=2&limit=2"),
      await page("?after_turn=4&limit=2"),
    ];
    expect(
      pages.map(({ entries, next_after_turn }) => [entries.map((entry) => entry.turn), next_after_turn]),
    ).toEqual([
      [[1, 2], 2],
      [[3, 4], 4],
      [[5], null],
    ]);
    for (const query of ["?limit=0", "?limit=10001", "?limit=x"]) {
      const refused = await app.call(`/sessions/${paged}/prompt-metrics${query}`, { key: alice });
      expect(refused.status, query).toBe(400);
    }
    const budget = await (await app.call(`/sessions/${paged}/budget`, { key: alice })).json();
    expect(budget).toMatchObject({
      ok: false,
      last_call_ok: true,
      last_turn: { turn: 5 },
      summary: { turns: 5, violation_turns: [2] },
    });
  });

  it.each([
    ["a traversal session id", "..%2F..%2Fetc", "/hot-state", 400],
    ["an encoded NUL", "a%00b", "/hot-state", 400],
    ["a version that is not a number", sessionId, "/hot-state/versions/one", 400],
    ["version 0", sessionId, "/hot-state/versions/0", 400],
    ["a version past the keys", sessionId, "/hot-state/versions/1000000000000", 400],
    ["a negative after_turn", sessionId, "/prompt-metrics?after_turn=-1", 400],
  ])("refuses %s", async (_why, id, rest, status) => {
    const response = await app.call(`/sessions/${id}${rest}`, { key: alice });
    expect(response.status).toBe(status);
    expect(await errorCode(response)).toBe("INVALID_INPUT");
  });

  it.each([
    ["no expected_version", { state: { session_id: "x" } }],
    ["a negative expected_version", { expected_version: -1, state: {} }],
    ["a state of another session", { expected_version: 2, state: { session_id: "someone-else" } }],
    [
      "a state with unknown fields",
      { expected_version: 2, state: { session_id: sessionId, note: "free prose" } },
    ],
    [
      "a dispatcher_token that is not a string",
      { expected_version: 2, dispatcher_token: 42, state: { session_id: sessionId } },
    ],
  ])("refuses a write with %s", async (_why, body) => {
    const response = await put(alice, sessionId, body);
    expect(response.status).toBe(400);
    expect(await errorCode(response)).toBe("INVALID_INPUT");
  });

  it.each([
    ["no prompts", {}],
    ["a negative ref_files", { system_prompt: "a", user_prompt: "b", ref_files: -2 }],
    ["a fractional rag_chunks", { system_prompt: "a", user_prompt: "b", rag_chunks: 1.5 }],
    ["a hot_state_version as a string", { system_prompt: "a", user_prompt: "b", hot_state_version: "1" }],
    ["a negative hot_state_version", { system_prompt: "a", user_prompt: "b", hot_state_version: -1 }],
    ["a hot_state_version past the keys", { system_prompt: "a", user_prompt: "b", hot_state_version: 1e12 }],
  ])("refuses metrics with %s", async (_why, body) => {
    const response = await app.call(`/sessions/${sessionId}/prompt-metrics`, { key: alice, json: body });
    expect(response.status).toBe(400);
    expect(await errorCode(response)).toBe("INVALID_INPUT");
  });
});

describe("hot state over HTTP with STOWAGE_HOT_STATE_KEEP_VERSIONS", () => {
  it("keeps the newest versions only; older ones are 404, the latest is still found", async () => {
    const pruning = await startTestApp({ STOWAGE_HOT_STATE_KEEP_VERSIONS: "2" });
    try {
      const key = await pruning.keyFor({ kind: "user", id: "carol" });
      const id = randomUUID();
      expect((await pruning.call("/agents/sessions", { key, json: { sessionId: id } })).status).toBe(201);
      for (let version = 0; version < 4; version++) {
        const written = await pruning.call(`/sessions/${id}/hot-state`, {
          key,
          method: "PUT",
          json: {
            expected_version: version,
            state: { session_id: id, last_successful_step: `step ${version}` },
          },
        });
        expect(written.status).toBe(201);
      }
      const status = async (path: string) =>
        (await pruning.call(`/sessions/${id}/hot-state${path}`, { key })).status;
      expect([await status("/versions/1"), await status("/versions/2"), await status("/versions/3")]).toEqual(
        [404, 404, 200],
      );
      expect(await (await pruning.call(`/sessions/${id}/hot-state`, { key })).json()).toMatchObject({
        version: 4,
        state: { last_successful_step: "step 3" },
      });
    } finally {
      await pruning.close();
    }
  });
});
