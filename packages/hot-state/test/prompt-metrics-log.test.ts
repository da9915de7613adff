import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createMemoryObjectStore, type ObjectStore, StowageError } from "@stowage/core";
import { expectStowageError, HOSTILE_KEYS, HOSTILE_PREFIXES } from "@stowage/core/testing";
import { createFsObjectStore } from "@stowage/storage-fs";
import { filesUnder, runChild, tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import {
  createPromptMetricsLog,
  type PromptMetrics,
  type PromptMetricsEntry,
  summarizePromptMetrics,
} from "../src/index.js";
import { captureLogger } from "./capture-logger.js";
import { measuredCall } from "./measured-call.js";

const base = await tempDirectory("stowage-hot-state-metrics-");
const FIXED = new Date("2026-11-23T04:00:00.000Z");

const call = measuredCall;

const openLog = (store = createMemoryObjectStore(), logger = captureLogger()) =>
  createPromptMetricsLog({ store, now: () => FIXED, logger });

describe("prompt metrics log over an ObjectStore", () => {
  it("appends one entry per call with the record, warnings and violations beside it; reads the series in turn order", async () => {
    const log = openLog();
    const calls = [call("s-1", 10), call("s-1", 20), call("s-1", 30, { maxPromptTokens: 5 })];
    const appended: PromptMetricsEntry[] = [];
    for (const [i, metrics] of calls.entries())
      appended.push(await log.append(metrics, { hotStateVersion: i + 1 }));
    expect(appended.map((entry) => entry.turn)).toEqual([1, 2, 3]);
    const series = await log.series("s-1");
    expect(series).toEqual(appended);
    expect(series[0]).toMatchObject({
      type: "prompt_metrics_entry",
      session: "s-1",
      turn: 1,
      recorded_at: "2026-11-23T04:00:00.000Z",
      hot_state_version: 1,
      record: {
        type: "prompt_metrics",
        session: "s-1",
        run: "run-1",
        sys_chars: 10,
        user_chars: 5,
        budget_ok: true,
      },
      warnings: [],
      violations: [],
    });
    expect(series[2]!.record.budget_ok).toBe(false);
    expect(series[2]!.violations).toMatchObject([{ field: "maxPromptTokens", kind: "exceeded", limit: 5 }]);
    expect(series[2]!.warnings.map((warning) => warning.kind)).toEqual([
      "prompt_tokens",
      "budget_violations",
    ]);
    expect(await log.series("s-1", { afterTurn: 2 })).toEqual([appended[2]]);
    expect(await log.series("other")).toEqual([]);
  });

  it("round-trips on the file system: one JSON line per turn, compacted into one segment of turns 1…n", async () => {
    const root = join(base, "fs");
    const log = openLog(createFsObjectStore({ root }));
    for (let i = 0; i < 70; i++) await log.append(call("sess", 100 + i));
    const files = await filesUnder(root);
    expect(files.filter((file) => file.includes("/segments/"))).toEqual([
      "prompt-metrics/sess/segments/000000000064.jsonl",
    ]);
    expect(files.filter((file) => file.includes("/turns/"))).toHaveLength(70);
    const turn = JSON.parse(
      await readFile(join(root, "prompt-metrics/sess/turns/000000000070.json"), "utf8"),
    );
    expect(turn).toMatchObject({ turn: 70, record: { sys_chars: 169 } });
    const segment = (await readFile(join(root, "prompt-metrics/sess/segments/000000000064.jsonl"), "utf8"))
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line).turn);
    expect(segment).toEqual(Array.from({ length: 64 }, (_, i) => i + 1));
    // A new log (another process) reads the same series.
    const series = await openLog(createFsObjectStore({ root })).series("sess");
    expect(series.map((entry) => entry.record.sys_chars)).toEqual(
      Array.from({ length: 70 }, (_, i) => 100 + i),
    );
    expect(series.map((entry) => entry.turn)).toEqual(Array.from({ length: 70 }, (_, i) => i + 1));
  });

  it("keeps one segment as it grows, and reads the same series from the segment and the turns after it", async () => {
    const store = createMemoryObjectStore();
    const log = openLog(store);
    for (let i = 0; i < 300; i++) await log.append(call("s", i));
    const keys: string[] = [];
    for await (const item of store.iterate({ prefix: "prompt-metrics/s/segments/" })) keys.push(item.key);
    expect(keys).toHaveLength(1);
    const series = await openLog(store).series("s");
    expect(series.map((entry) => entry.record.sys_chars)).toEqual(Array.from({ length: 300 }, (_, i) => i));
  });

  it("fails a read whose turns fail while its segment is read, with the store's error", async () => {
    const store = createMemoryObjectStore();
    const log = openLog(store);
    for (let i = 0; i < 70; i++) await log.append(call("s", i));
    const failingTurns: ObjectStore = {
      ...store,
      get: (key, options) =>
        key.includes("/turns/")
          ? Promise.reject(new StowageError("UNAVAILABLE", "turn read failed"))
          : store.get(key, options),
    };
    await expectStowageError(openLog(failingTurns).series("s"), "UNAVAILABLE");
  });

  it("lets two writers append to one session without losing or repeating a turn", async () => {
    const store = createMemoryObjectStore();
    const [a, b] = [openLog(store), openLog(store)];
    const writes: Promise<PromptMetricsEntry>[] = [];
    for (let i = 0; i < 100; i++) writes.push((i % 2 ? a : b).append(call("shared", i)));
    const turns = (await Promise.all(writes)).map((entry) => entry.turn).sort((x, y) => x - y);
    expect(turns).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    const series = await openLog(store).series("shared");
    expect(series.map((entry) => entry.record.sys_chars).sort((x, y) => x - y)).toEqual(
      Array.from({ length: 100 }, (_, i) => i),
    );
  });

  it("reads a window of the series: afterTurn and limit, across the segment and the turns after it", async () => {
    const store = createMemoryObjectStore();
    const log = openLog(store);
    for (let i = 0; i < 100; i++) await log.append(call("s", i));
    const reader = openLog(store);
    const turns = async (options: { afterTurn?: number; limit?: number }) =>
      (await reader.series("s", options)).map((entry) => entry.turn);
    expect(await turns({ limit: 3 })).toEqual([1, 2, 3]);
    expect(await turns({ afterTurn: 62, limit: 4 })).toEqual([63, 64, 65, 66]);
    expect(await turns({ afterTurn: 97, limit: 10 })).toEqual([98, 99, 100]);
    expect(await turns({ afterTurn: 100, limit: 10 })).toEqual([]);
  });

  it("refuses a store whose create-only puts are not atomic (two writers could both take a turn)", async () => {
    const store = createMemoryObjectStore();
    const notAtomic = {
      ...store,
      name: "s3",
      capabilities: { ...store.capabilities, atomicCreateOnly: false },
    };
    await expectStowageError(() => openLog(notAtomic), "INVALID_INPUT", "NOT_ATOMIC_STORE");
  });

  it("starts again from turn 1 after the session's log was deleted, never past a gap readers stop at", async () => {
    const store = createMemoryObjectStore();
    const log = openLog(store);
    for (let i = 0; i < 5; i++) await log.append(call("s", i));
    for await (const item of store.iterate({ prefix: "prompt-metrics/s/" })) await store.delete(item.key);
    // This log still knows turn 5 as the last one.
    expect((await log.append(call("s", 100))).turn).toBe(1);
    expect((await log.append(call("s", 101))).turn).toBe(2);
    expect((await openLog(store).series("s")).map((entry) => entry.record.sys_chars)).toEqual([100, 101]);
    expect(await store.head("prompt-metrics/s/turns/000000000006.json")).toBeNull();
  });

  it("skips a damaged turn with a logged warning and reads the rest", async () => {
    const root = join(base, "damaged");
    const log = openLog(createFsObjectStore({ root }));
    for (let i = 0; i < 3; i++) await log.append(call("s", i));
    await writeFile(
      join(root, "prompt-metrics/s/turns/000000000002.json"),
      '{"type":"prompt_metrics_entry"}\n',
    );
    const logger = captureLogger();
    const series = await openLog(createFsObjectStore({ root }), logger).series("s");
    expect(series.map((entry) => entry.turn)).toEqual([1, 3]);
    expect(logger.lines).toHaveLength(1);
    expect(logger.lines[0]!.details).toEqual({ turn: 2 });
  });
});

describe("summarizePromptMetrics", () => {
  const entry = (turn: number, hs: number, est: number | null, kinds: string[], ok = true) =>
    ({
      turn,
      record: { hs_tokens: hs, est_tokens: est, budget_ok: ok, budget_violations: ok ? 0 : 2 },
      warnings: kinds.map((kind) => ({ kind })),
    }) as unknown as PromptMetricsEntry;

  it("gives max and nearest-rank p95 of hot-state and prompt tokens, violations and turns over each threshold", () => {
    // 20 turns with 10, 20, …, 200 hot-state tokens: p95 is the 19th value (ceil(0.95 × 20)).
    const entries = Array.from({ length: 20 }, (_, i) =>
      entry(
        i + 1,
        (i + 1) * 10,
        i === 4 ? null : 1000 + i,
        i >= 17 ? ["hot_state_tokens", "hot_state_tokens"] : [],
      ),
    );
    entries.push(entry(21, 5, 9000, ["prompt_tokens", "budget_violations"], false));
    expect(summarizePromptMetrics(entries)).toEqual({
      turns: 21,
      hs_tokens: { max: 200, p95: 190 },
      // 20 estimates (turn 5 failed): 1000…1019 without 1004, and 9000; ceil(0.95 × 20) = 19th.
      est_tokens: { max: 9000, p95: 1019 },
      violating_turns: 1,
      violations: 2,
      over_threshold: {
        hot_state_tokens: 3,
        artifact_index_entries: 0,
        prompt_tokens: 1,
        budget_violations: 1,
      },
      violation_turns: [21],
    });
  });

  it("sums up an empty series", () => {
    expect(summarizePromptMetrics([])).toMatchObject({ turns: 0, hs_tokens: { max: null, p95: null } });
  });
});

describe("prompt metrics log: hostile inputs", () => {
  const log = openLog();
  const hostileSessions = [
    ...HOSTILE_KEYS,
    { value: "a/b", why: "a key, not an id" },
    { value: ".hidden", why: "hidden name" },
    { value: "x".repeat(129), why: "over 128 characters" },
  ];
  it.each(hostileSessions)("refuses session id $why", async ({ value }) => {
    await expectStowageError(() => log.series(value as string), "INVALID_INPUT");
    if (
      typeof value === "string" &&
      value.length > 0 &&
      value.length <= 256 &&
      !/[\u0000-\u001f\u007f]|[\ud800-\udfff]/.test(value)
    ) {
      // A session the hot state accepts as free text but not as a key segment.
      await expectStowageError(log.append(call(value, 1)), "INVALID_INPUT");
    }
  });

  it.each([
    { value: -1, why: "negative" },
    { value: 1.5, why: "fractional" },
    { value: Number.NaN, why: "NaN" },
    { value: "1", why: "a string" },
    { value: null, why: "null" },
  ])("refuses afterTurn $why", async ({ value }) => {
    await expectStowageError(log.series("s", { afterTurn: value as number }), "INVALID_INPUT");
  });

  it.each([0, -1, 1.5, Number.NaN, "5"])("refuses limit %j", async (value) => {
    await expectStowageError(log.series("s", { limit: value as number }), "INVALID_INPUT");
  });

  it.each([0, -3, 1.5, Number.NaN, "2"])("refuses hotStateVersion %s", async (value) => {
    await expectStowageError(log.append(call("s", 1), { hotStateVersion: value as number }), "INVALID_INPUT");
  });

  it.each([
    { first: FIXED, atWrite: new Date(Number.NaN), why: "an invalid date at the turn's write" },
    {
      first: FIXED,
      atWrite: new Date("+010000-01-01T00:00:00.000Z"),
      why: "a year past 9999 at the turn's write",
    },
    { first: new Date(Number.NaN), atWrite: FIXED, why: "an invalid date when checked" },
    { first: "2026-11-23", atWrite: FIXED, why: "a string, not a Date" },
  ])("refuses a clock giving $why, and writes nothing", async ({ first, atWrite }) => {
    const store = createMemoryObjectStore();
    const times = [first, atWrite];
    const clocked = createPromptMetricsLog({
      store,
      now: () => (times.shift() ?? FIXED) as Date,
      logger: captureLogger(),
    });
    await expectStowageError(clocked.append(call("clock", 1)), "INVALID_INPUT");
    expect(await clocked.series("clock")).toEqual([]);
  });

  it("refuses what is not a measurePrompt result, a bad prefix or store", async () => {
    for (const metrics of [
      null,
      {},
      { record: { session: "s" } },
      { ...call("s", 1), record: { ...call("s", 1).record, hs_tokens: -1 } },
      // Past PostgreSQL's integer: refused by every log, so that every log keeps the same records.
      { ...call("s", 1), record: { ...call("s", 1).record, est_tokens: 3_000_000_000 } },
    ]) {
      await expectStowageError(log.append(metrics as PromptMetrics), "INVALID_INPUT");
    }
    for (const { value } of [...HOSTILE_PREFIXES, { value: "x" }, { value: 1 }]) {
      await expectStowageError(
        () => createPromptMetricsLog({ store: createMemoryObjectStore(), prefix: value as string }),
        "INVALID_INPUT",
      );
    }
    await expectStowageError(() => createPromptMetricsLog({ store: undefined as never }), "INVALID_INPUT");
  });
});

describe("prompt metrics log: two processes", () => {
  it("two processes appending to one session on the file system at once: turns 1…n without gaps, every entry once", async () => {
    const root = join(base, "two-processes");
    const count = 80; // past the first compaction (64 turns)
    const children = await Promise.all(
      ["a", "b"].map((writer) =>
        runChild(new URL("./children/append-metrics.ts", import.meta.url), [
          root,
          "race",
          writer,
          String(count),
          join(root, "barrier"),
          "a,b",
        ]),
      ),
    );
    for (const child of children) expect(child, child.stderr).toMatchObject({ code: 0 });
    const series = await openLog(createFsObjectStore({ root })).series("race");
    expect(series.map((entry) => entry.turn)).toEqual(Array.from({ length: 2 * count }, (_, i) => i + 1));
    // Each writer's entries are all there, once, in the order it appended them.
    for (const [index, writer] of ["a", "b"].entries()) {
      const mine = series.filter((entry) => entry.record.run === writer);
      expect(mine.map((entry) => entry.record.sys_chars)).toEqual(Array.from({ length: count }, (_, i) => i));
      // The turn each append returned is where the entry is read back.
      expect(mine.map((entry) => entry.turn)).toEqual(children[index]!.stdout.trim().split(" ").map(Number));
    }
  });
});
