import { HOSTILE_KEYS } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { createMemoryPromptMetricsLog } from "../src/index.js";
import { measuredCall as call } from "./measured-call.js";

const FIXED = new Date("2026-11-23T04:00:00.000Z");
const INVALID_INPUT = expect.objectContaining({ code: "INVALID_INPUT" });

describe("createMemoryPromptMetricsLog", () => {
  it("numbers each session's entries from turn 1 and reads a window of them in turn order", async () => {
    const log = createMemoryPromptMetricsLog({ now: () => FIXED });
    for (let i = 0; i < 5; i++) await log.append(call("sess-1", 100 + i), { hotStateVersion: i + 1 });
    await log.append(call("sess-2", 1));
    const series = await log.series("sess-1");
    expect(series.map((entry) => [entry.turn, entry.hot_state_version, entry.record.sys_chars])).toEqual([
      [1, 1, 100],
      [2, 2, 101],
      [3, 3, 102],
      [4, 4, 103],
      [5, 5, 104],
    ]);
    expect(series[0]!.recorded_at).toBe(FIXED.toISOString());
    expect((await log.series("sess-1", { afterTurn: 3 })).map((entry) => entry.turn)).toEqual([4, 5]);
    expect((await log.series("sess-1", { afterTurn: 1, limit: 2 })).map((entry) => entry.turn)).toEqual([
      2, 3,
    ]);
    expect((await log.series("sess-2")).map((entry) => entry.turn)).toEqual([1]);
    expect(await log.series("never-written")).toEqual([]);
  });

  it("deletes one session's entries, not another's; the next append is turn 1 again", async () => {
    const log = createMemoryPromptMetricsLog();
    for (let i = 0; i < 3; i++) await log.append(call("doomed", 1));
    await log.append(call("kept", 1));
    await log.deleteSession("doomed");
    await log.deleteSession("never-written");
    expect(await log.series("doomed")).toEqual([]);
    expect((await log.series("kept")).map((entry) => entry.turn)).toEqual([1]);
    expect((await log.append(call("doomed", 1))).turn).toBe(1);
  });

  it.each([...HOSTILE_KEYS, { value: "a/b", why: "a key, not an id" }])(
    "refuses session id $why everywhere, and stores nothing for it",
    async ({ value }) => {
      const log = createMemoryPromptMetricsLog();
      await expect(log.series(value as string)).rejects.toThrowError(INVALID_INPUT);
      await expect(log.deleteSession(value as string)).rejects.toThrowError(INVALID_INPUT);
      const metrics = call("s", 1);
      const named = { ...metrics, record: { ...metrics.record, session: value as string } };
      await expect(log.append(named)).rejects.toThrowError(INVALID_INPUT);
    },
  );
});
