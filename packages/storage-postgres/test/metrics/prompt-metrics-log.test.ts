import { expectStowageError, HOSTILE_KEYS } from "@stowage/core/testing";
import {
  buildHotState,
  measurePrompt,
  type PromptMetrics,
  type PromptMetricsEntry,
  type PromptMetricsLog,
} from "@stowage/hot-state";
import { countTokensHeuristic } from "@stowage/test-support";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createPostgresPromptMetricsLog } from "../../src/metrics/prompt-metrics-log.js";
import { describeBackends } from "../backends.js";

const FIXED = new Date("2026-11-23T04:00:00.000Z");
const quiet = { warn() {} };

/** One model call of `session` whose system prompt is `systemChars` characters. */
function call(session: string, systemChars: number, budget = {}): PromptMetrics {
  const hotState = buildHotState(
    { session_id: session, objective: "ship" },
    { countTokens: countTokensHeuristic, logger: quiet },
  );
  return measurePrompt(
    { sessionId: session, hotState, systemPrompt: "y".repeat(systemChars), userPrompt: "next step" },
    { countTokens: countTokensHeuristic, logger: quiet, budget },
  );
}

describeBackends("prompt metrics log", (backend) => {
  const logs: { name: string; open: (namespace: string) => PromptMetricsLog }[] = [
    {
      name: "prompt_metrics table",
      open: (namespace) =>
        createPostgresPromptMetricsLog({ db: backend.connection().db, namespace, now: () => FIXED }),
    },
  ];
  for (const { name, open } of logs) {
    describe(name, () => {
      it("round-trips a session's series: turns from 1, records, warnings and violations as appended", async () => {
        const log = open(`rt-${name.length}`);
        const appended: PromptMetricsEntry[] = [];
        for (let i = 0; i < 80; i++) {
          appended.push(
            await log.append(call("sess-1", 100 + i, i === 40 ? { maxPromptTokens: 10 } : {}), {
              hotStateVersion: i + 1,
            }),
          );
        }
        const series = await log.series("sess-1");
        expect(series).toEqual(appended);
        expect(series.map((entry) => entry.turn)).toEqual(Array.from({ length: 80 }, (_, i) => i + 1));
        expect(series[40]).toMatchObject({
          turn: 41,
          recorded_at: FIXED.toISOString(),
          hot_state_version: 41,
          record: {
            session: "sess-1",
            sys_chars: 140,
            user_chars: 9,
            budget_ok: false,
            budget_violations: 1,
          },
          violations: [{ field: "maxPromptTokens", limit: 10, kind: "exceeded" }],
        });
        expect(series).toHaveLength(80);
        expect(series.filter((entry) => !entry.record.budget_ok).map((entry) => entry.turn)).toEqual([41]);
        // Another log on the same namespace (another process) reads the same series.
        expect(await open(`rt-${name.length}`).series("sess-1")).toEqual(series);
        expect(await log.series("sess-1", { afterTurn: 78 })).toEqual(series.slice(78));
        expect(await log.series("other")).toEqual([]);
        expect(await open("another-namespace").series("sess-1")).toEqual([]);
      });

      it("gives two concurrent writers distinct turns without gaps", async () => {
        const [a, b] = [open(`cc-${name.length}`), open(`cc-${name.length}`)];
        const written = await Promise.all(
          Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).append(call("shared", i))),
        );
        expect(written.map((entry) => entry.turn).sort((x, y) => x - y)).toEqual(
          Array.from({ length: 40 }, (_, i) => i + 1),
        );
        const series = await a.series("shared");
        expect(series.map((entry) => entry.record.sys_chars).sort((x, y) => x - y)).toEqual(
          Array.from({ length: 40 }, (_, i) => i),
        );
      });

      it("deletes one session's entries, not another namespace's or session's; the next append is turn 1", async () => {
        const log = open(`del-${name.length}`);
        const other = open(`del-other-${name.length}`);
        for (let i = 0; i < 3; i++) await log.append(call("doomed", i));
        await log.append(call("kept", 1));
        await other.append(call("doomed", 1));
        await log.deleteSession("doomed");
        expect(await log.series("doomed")).toEqual([]);
        expect((await log.series("kept")).map((entry) => entry.turn)).toEqual([1]);
        expect((await other.series("doomed")).map((entry) => entry.turn)).toEqual([1]);
        expect((await log.append(call("doomed", 9))).turn).toBe(1);
        await log.deleteSession("never-written");
        for (const id of [...HOSTILE_KEYS, "", "a/b"]) {
          await expectStowageError(() => log.deleteSession(id as string), "INVALID_INPUT");
        }
      });
    });
  }

  it("keeps the measures a dashboard queries in columns", async () => {
    const { db } = backend.connection();
    const log = createPostgresPromptMetricsLog({ db, namespace: "columns" });
    await log.append(call("cols", 50), { hotStateVersion: 3 });
    const result = await db.execute(
      sql`SELECT session_id, turn, hot_state_version, hs_tokens, est_tokens, budget_ok FROM prompt_metrics WHERE namespace = 'columns'`,
    );
    const row = (result as unknown as { rows: Record<string, unknown>[] }).rows[0]!;
    const expected = call("cols", 50).record;
    expect({ ...row, turn: Number(row.turn), hot_state_version: Number(row.hot_state_version) }).toEqual({
      session_id: "cols",
      turn: 1,
      hot_state_version: 3,
      hs_tokens: expected.hs_tokens,
      est_tokens: expected.est_tokens,
      budget_ok: true,
    });
  });

  it("skips a damaged row with a logged warning and reads the rest of the series", async () => {
    const { db } = backend.connection();
    const warnings: unknown[] = [];
    const logger = { warn: (details: unknown) => void warnings.push(details) };
    const log = createPostgresPromptMetricsLog({ db, namespace: "damaged", logger });
    for (let i = 0; i < 3; i++) await log.append(call("s", 10 + i));
    await db.execute(
      sql`UPDATE prompt_metrics SET entry = '{"record": "not one"}' WHERE namespace = 'damaged' AND turn = 2`,
    );
    const series = await log.series("s");
    expect(series.map((entry) => [entry.turn, entry.record.sys_chars])).toEqual([
      [1, 10],
      [3, 12],
    ]);
    expect(warnings).toEqual([{ turn: 2 }]);
  });

  it("reads a window: afterTurn and limit", async () => {
    const log = createPostgresPromptMetricsLog({ db: backend.connection().db, namespace: "window" });
    for (let i = 0; i < 6; i++) await log.append(call("s", i));
    expect((await log.series("s", { afterTurn: 2, limit: 3 })).map((entry) => entry.turn)).toEqual([3, 4, 5]);
    expect((await log.series("s", { afterTurn: 5, limit: 3 })).map((entry) => entry.turn)).toEqual([6]);
  });

  describe("hostile inputs", () => {
    it.each([...HOSTILE_KEYS, { value: "a/b", why: "a key" }, { value: "x".repeat(129), why: "too long" }])(
      "refuses session id $why",
      async ({ value }) => {
        const log = createPostgresPromptMetricsLog({ db: backend.connection().db, namespace: "hostile" });
        await expectStowageError(log.series(value as string), "INVALID_INPUT");
      },
    );

    it("refuses a bad afterTurn, hotStateVersion, namespace or db", async () => {
      const log = createPostgresPromptMetricsLog({ db: backend.connection().db, namespace: "hostile" });
      for (const afterTurn of [-1, 1.5, Number.NaN, "2"]) {
        await expectStowageError(log.series("s", { afterTurn: afterTurn as number }), "INVALID_INPUT");
      }
      for (const limit of [0, -1, 1.5, "3"]) {
        await expectStowageError(log.series("s", { limit: limit as number }), "INVALID_INPUT");
      }
      // Past the integer columns: refused before the database is asked, as every log refuses it.
      const huge = call("s", 1);
      await expectStowageError(
        log.append({ ...huge, record: { ...huge.record, est_tokens: 3_000_000_000 } }),
        "INVALID_INPUT",
      );
      for (const hotStateVersion of [0, -1, 2.5]) {
        await expectStowageError(log.append(call("s", 1), { hotStateVersion }), "INVALID_INPUT");
      }
      await expectStowageError(log.append(call("a/b", 1)), "INVALID_INPUT");
      for (const namespace of ["..", "a/b", ""]) {
        await expectStowageError(
          () => createPostgresPromptMetricsLog({ db: backend.connection().db, namespace }),
          "INVALID_INPUT",
        );
      }
      await expectStowageError(() => createPostgresPromptMetricsLog({ db: {} as never }), "INVALID_INPUT");
    });
  });
});
