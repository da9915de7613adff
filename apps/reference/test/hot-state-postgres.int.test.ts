import { randomUUID } from "node:crypto";
import { integrationEnv } from "@stowage/core/testing";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./support/test-app.js";

const postgres = integrationEnv("reference app on PostgreSQL", ["DATABASE_URL"]);

describe.skipIf(!postgres.ready)("hot state and prompt metrics through the app on PostgreSQL", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ DATABASE_URL: postgres.values.DATABASE_URL! });
  });
  afterAll(() => app.close());

  it("keeps the metrics in the prompt_metrics table, under the caller's namespace", async () => {
    const user = `hs-${randomUUID().slice(0, 8)}`;
    const key = await app.keyFor({ kind: "user", id: user });
    const sessionId = randomUUID();
    expect((await app.call("/agents/sessions", { key, json: { sessionId } })).status).toBe(201);
    const put = await app.call(`/sessions/${sessionId}/hot-state`, {
      key,
      method: "PUT",
      json: { expected_version: 0, state: { session_id: sessionId, objective: "on PostgreSQL" } },
    });
    expect(put.status).toBe(201);
    for (const system_prompt of ["short", "word ".repeat(10_000)]) {
      const posted = await app.call(`/sessions/${sessionId}/prompt-metrics`, {
        key,
        json: { system_prompt, user_prompt: "go" },
      });
      expect(posted.status).toBe(201);
    }
    const { entries, summary } = (await (
      await app.call(`/sessions/${sessionId}/prompt-metrics`, { key })
    ).json()) as { entries: { turn: number; hot_state_version: number }[]; summary: unknown };
    expect(entries.map((entry) => [entry.turn, entry.hot_state_version])).toEqual([
      [1, 1],
      [2, 1],
    ]);
    expect(summary).toMatchObject({ turns: 2, violating_turns: 1, violation_turns: [2] });
    const rows = await app.server.services.database.db.execute(
      sql`SELECT turn, budget_ok FROM prompt_metrics WHERE namespace = ${`user:${user}`} AND session_id = ${sessionId} ORDER BY turn`,
    );
    expect(
      (rows as unknown as { rows: { turn: string | number; budget_ok: boolean }[] }).rows.map((row) => [
        Number(row.turn),
        row.budget_ok,
      ]),
    ).toEqual([
      [1, true],
      [2, false],
    ]);
    // One damaged row: the series and the budget are still served, without it.
    await app.server.services.database.db.execute(
      sql`UPDATE prompt_metrics SET entry = 'not json' WHERE namespace = ${`user:${user}`} AND session_id = ${sessionId} AND turn = 1`,
    );
    const after = (await (await app.call(`/sessions/${sessionId}/prompt-metrics`, { key })).json()) as {
      entries: { turn: number }[];
    };
    expect(after.entries.map((entry) => entry.turn)).toEqual([2]);
    const budget = await app.call(`/sessions/${sessionId}/budget`, { key });
    expect(budget.status).toBe(200);
    expect(await budget.json()).toMatchObject({ ok: false, summary: { turns: 1, violation_turns: [2] } });
  });
});
