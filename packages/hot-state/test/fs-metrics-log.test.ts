import { appendFile, mkdir, readFile, rm, symlink, truncate, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expectStowageError, HOSTILE_KEYS } from "@stowage/core/testing";
import { runChild, tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import {
  createFsPromptMetricsLog,
  type FsPromptMetricsLogOptions,
  type PromptMetrics,
} from "../src/index.js";
import { captureLogger } from "./capture-logger.js";
import { measuredCall } from "./measured-call.js";

const base = await tempDirectory("stowage-fs-metrics-");
const FIXED = new Date("2026-11-23T04:00:00.000Z");
let roots = 0;
const freshRoot = () => join(base, `root-${++roots}`);

const call = measuredCall;

const openLog = (options: Partial<FsPromptMetricsLogOptions> & { root: string }) =>
  createFsPromptMetricsLog({ fsync: false, now: () => FIXED, logger: captureLogger(), ...options });

const linesOf = async (path: string) => (await readFile(path, "utf8")).split("\n");

describe("prompt metrics log on the file system", () => {
  it("appends one JSON line per call to <root>/<segments>/<session>.jsonl; turn n is the n-th line", async () => {
    const root = freshRoot();
    const log = openLog({ root, segments: ["user", "alice"], fsync: true });
    const first = await log.append(call("sess-1", 10), { hotStateVersion: 1 });
    const second = await log.append(call("sess-1", 20, { maxPromptTokens: 5 }), { hotStateVersion: 2 });
    expect([first.turn, second.turn]).toEqual([1, 2]);
    const lines = await linesOf(join(root, "user/alice/sess-1.jsonl"));
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe("");
    const stored = JSON.parse(lines[0]!);
    // The line's place is its turn; what it carries is the entry and who appended it.
    expect(stored).not.toHaveProperty("turn");
    expect(stored).toMatchObject({
      type: "prompt_metrics_entry",
      session: "sess-1",
      recorded_at: "2026-11-23T04:00:00.000Z",
      hot_state_version: 1,
      record: { type: "prompt_metrics", session: "sess-1", sys_chars: 10, user_chars: 5, budget_ok: true },
      warnings: [],
      violations: [],
    });
    expect(stored.append_id).toMatch(/^[0-9a-f]{12}\.1$/);
    const series = await openLog({ root, segments: ["user", "alice"] }).series("sess-1");
    expect(series).toEqual([first, second]);
    expect(series[1]!.violations).toMatchObject([{ field: "maxPromptTokens", limit: 5, kind: "exceeded" }]);
    expect(await openLog({ root, segments: ["user", "alice"] }).series("other")).toEqual([]);
    expect(await openLog({ root, segments: ["user", "bob"] }).series("sess-1")).toEqual([]);
  });

  it("reads a window: afterTurn and limit", async () => {
    const log = openLog({ root: freshRoot() });
    for (let i = 0; i < 10; i++) await log.append(call("s", i));
    const page = await log.series("s", { afterTurn: 3, limit: 4 });
    expect(page.map((entry) => [entry.turn, entry.record.sys_chars])).toEqual([
      [4, 3],
      [5, 4],
      [6, 5],
      [7, 6],
    ]);
    expect((await log.series("s", { afterTurn: 8 })).map((entry) => entry.turn)).toEqual([9, 10]);
    expect(await log.series("s", { afterTurn: 10, limit: 5 })).toEqual([]);
  });

  it("gives a writer the right turn after lines another writer appended in between", async () => {
    const root = freshRoot();
    const [a, b] = [openLog({ root }), openLog({ root })];
    expect((await a.append(call("s", 1))).turn).toBe(1);
    expect((await b.append(call("s", 2))).turn).toBe(2);
    expect((await b.append(call("s", 3))).turn).toBe(3);
    expect((await a.append(call("s", 4))).turn).toBe(4);
    const series = await a.series("s");
    expect(series.map((entry) => [entry.turn, entry.record.sys_chars])).toEqual([
      [1, 1],
      [2, 2],
      [3, 3],
      [4, 4],
    ]);
  });

  it("starts again from turn 1 when the session's file was deleted, and from the file when it was truncated (what it knew is not trusted)", async () => {
    const root = freshRoot();
    const log = openLog({ root });
    for (let i = 0; i < 5; i++) await log.append(call("s", i));
    await rm(join(root, "s.jsonl"));
    expect(await log.series("s")).toEqual([]);
    expect((await log.append(call("s", 100))).turn).toBe(1);
    expect((await log.append(call("s", 101))).turn).toBe(2);
    expect((await log.series("s")).map((entry) => entry.record.sys_chars)).toEqual([100, 101]);
    await truncate(join(root, "s.jsonl"), 0);
    expect((await log.append(call("s", 102))).turn).toBe(1);
    // The whole directory removed (a deleted tenant) and written again.
    await rm(root, { recursive: true });
    expect((await log.append(call("s", 103))).turn).toBe(1);
  });

  it("reads a line cut short by a crash as one damaged turn, logged, and the next append starts on a new line", async () => {
    const root = freshRoot();
    const log = openLog({ root });
    await log.append(call("s", 1));
    await appendFile(join(root, "s.jsonl"), '{"type":"prompt_metrics_entry","sess');
    const logger = captureLogger();
    const reader = openLog({ root, logger });
    // Unfinished: not a line yet (a writer may be in the middle of it).
    expect((await reader.series("s")).map((entry) => entry.turn)).toEqual([1]);
    expect((await openLog({ root }).append(call("s", 3))).turn).toBe(3);
    expect((await reader.series("s")).map((entry) => [entry.turn, entry.record.sys_chars])).toEqual([
      [1, 1],
      [3, 3],
    ]);
    expect(logger.lines.map((line) => line.details)).toEqual([{ turn: 2 }]);
  });

  it("skips damaged and foreign lines with a logged warning, and ignores empty lines", async () => {
    const root = freshRoot();
    const log = openLog({ root });
    await log.append(call("s", 1));
    const foreign = JSON.stringify({
      ...JSON.parse((await linesOf(join(root, "s.jsonl")))[0]!),
      session: "t",
    });
    await appendFile(join(root, "s.jsonl"), `not json\n\n${foreign}\n`);
    await log.append(call("s", 4));
    const logger = captureLogger();
    const series = await openLog({ root, logger }).series("s");
    expect(series.map((entry) => [entry.turn, entry.record.sys_chars])).toEqual([
      [1, 1],
      [4, 4],
    ]);
    expect(logger.lines.map((line) => line.details)).toEqual([{ turn: 2 }, { turn: 3 }]);
  });

  it("two processes appending to one session at once: turns 1…n without gaps, each writer's turns as it was told", async () => {
    const root = freshRoot();
    const count = 400;
    // Both start behind a barrier, so their appends overlap (checked below).
    const children = await Promise.all(
      ["a", "b"].map((writer) =>
        runChild(new URL("./children/append-metrics.ts", import.meta.url), [
          root,
          "race",
          writer,
          String(count),
          "fs",
          join(root, "barrier"),
          "a,b",
        ]),
      ),
    );
    for (const child of children) expect(child, child.stderr).toMatchObject({ code: 0 });
    const series = await openLog({ root }).series("race");
    expect(series.map((entry) => entry.turn)).toEqual(Array.from({ length: 2 * count }, (_, i) => i + 1));
    const switches = series.filter((entry, i) => i > 0 && entry.record.run !== series[i - 1]!.record.run);
    expect(switches.length, "the two writers' appends did not interleave").toBeGreaterThan(1);
    for (const [index, writer] of ["a", "b"].entries()) {
      const told = children[index]!.stdout.trim().split(" ").map(Number);
      const mine = series.filter((entry) => entry.record.run === writer);
      expect(mine.map((entry) => entry.turn)).toEqual(told);
      expect(mine.map((entry) => entry.record.sys_chars)).toEqual(Array.from({ length: count }, (_, i) => i));
    }
  });
});

describe("prompt metrics log on the file system: hostile inputs", () => {
  const root = join(base, "hostile");
  const log = openLog({ root });
  const hostileSessions = [
    ...HOSTILE_KEYS,
    { value: "a/b", why: "a path, not an id" },
    { value: "..", why: "the parent" },
    { value: "x".repeat(129), why: "over 128 characters" },
  ];
  it.each(hostileSessions)("refuses session id $why", async ({ value }) => {
    await expectStowageError(() => log.series(value as string), "INVALID_INPUT");
  });

  it("refuses a link or a FIFO at a session's file, and never writes through the link", async () => {
    const dir = join(base, "links");
    await mkdir(dir, { recursive: true });
    await writeFile(join(base, "outside.jsonl"), "");
    await symlink(join(base, "outside.jsonl"), join(dir, "linked.jsonl"));
    const linked = openLog({ root: dir });
    const refused = await expectStowageError(linked.append(call("linked", 1)), "FORBIDDEN");
    expect(refused.message).not.toContain(base);
    await expectStowageError(linked.series("linked"), "FORBIDDEN");
    expect(await readFile(join(base, "outside.jsonl"), "utf8")).toBe("");
    const { execFileSync } = await import("node:child_process");
    execFileSync("mkfifo", [join(dir, "fifo.jsonl")]);
    await expectStowageError(linked.append(call("fifo", 1)), "FORBIDDEN", "NOT_A_REGULAR_FILE");
    await expectStowageError(linked.series("fifo"), "FORBIDDEN", "NOT_A_REGULAR_FILE");
  });

  it("refuses a link at a segment below the root", async () => {
    const dir = join(base, "segment-links");
    await mkdir(join(dir, "user"), { recursive: true });
    await mkdir(join(base, "elsewhere"), { recursive: true });
    await symlink(join(base, "elsewhere"), join(dir, "user", "alice"));
    const tenant = openLog({ root: dir, segments: ["user", "alice"] });
    await expectStowageError(tenant.append(call("s", 1)), "FORBIDDEN");
  });

  it.each([
    { options: { root: "" }, why: "an empty root" },
    { options: { root: 5 }, why: "a root that is not a path" },
    { options: { root: base, segments: ["../x"] }, why: "a traversing segment" },
    { options: { root: base, segments: "user" }, why: "segments that are not a list" },
    { options: { root: base, fsync: "yes" }, why: "fsync that is not a boolean" },
  ])("refuses $why", async ({ options }) => {
    await expectStowageError(async () => {
      const bad = createFsPromptMetricsLog(options as unknown as FsPromptMetricsLogOptions);
      await bad.append(call("s", 1));
    }, "INVALID_INPUT");
  });

  it("refuses what is not a measurePrompt result, and counts past PostgreSQL's integer, writing nothing", async () => {
    const dir = freshRoot();
    const strict = openLog({ root: dir });
    const good = call("s", 1);
    for (const metrics of [
      null,
      {},
      { ...good, record: { ...good.record, hs_tokens: -1 } },
      { ...good, record: { ...good.record, est_tokens: 3_000_000_000 } },
    ]) {
      await expectStowageError(strict.append(metrics as PromptMetrics), "INVALID_INPUT");
    }
    expect(await strict.series("s")).toEqual([]);
  });

  it.each([-1, 1.5, "2", 0])("refuses the window afterTurn/limit %j", async (value) => {
    if (value !== 0)
      await expectStowageError(log.series("s", { afterTurn: value as number }), "INVALID_INPUT");
    await expectStowageError(log.series("s", { limit: value as number }), "INVALID_INPUT");
  });
});
