import { appendFile, mkdir, open, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expectStowageError, HOSTILE_KEYS } from "@stowage/core/testing";
import { tempDirectory } from "@stowage/test-support";
import { afterEach, describe, expect, it, vi } from "vitest";
import { DEFAULT_BUDGET_BYTES, measureThreadItem } from "../../src/budget/fit-to-budget.js";
import { statusItem, textItem, toolResultItem } from "../../src/builders/build-items.js";
import { createThreadLog, type ThreadLogProblem } from "../../src/log/thread-log.js";
import type { ThreadItem } from "../../src/schema/thread-item-schema.js";

const base = await tempDirectory("stowage-thread-log-");
afterEach(() => vi.restoreAllMocks());

let counter = 0;
const freshRoot = () => join(base, `root-${++counter}`);

async function collect(log: ReturnType<typeof createThreadLog>) {
  const problems: ThreadLogProblem[] = [];
  const records = [];
  for await (const record of log.records({ onProblem: (problem) => problems.push(problem) }))
    records.push(record);
  return { records, problems };
}

describe("createThreadLog", () => {
  it("lives at <root>/jobs/{jobId}/threads/{alias}/logs/thread.log", () => {
    const root = freshRoot();
    const log = createThreadLog({ root, jobId: "session_agent_harness-ses_01J", alias: "my-feature-x" });
    expect(log.path).toBe(
      join(root, "jobs", "session_agent_harness-ses_01J", "threads", "my-feature-x", "logs", "thread.log"),
    );
    expect(log.localLogPath).toBe("session_agent_harness-ses_01J/threads/my-feature-x/logs/thread.log");
  });

  it("appends one JSON line per item and reads the full payload back by id", async () => {
    const log = createThreadLog({ root: freshRoot(), jobId: "job-1", alias: "main" });
    const big = toolResultItem({ invocationId: "tu_1", output: "x".repeat(600_000), id: "item-1" });
    const appended = await log.append(big);
    expect(appended.id).toBe("item-1");
    expect(appended.item).toBe(big);
    const second = await log.append(textItem("no id yet"));
    expect(second.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(second.item).toEqual({ id: second.id, ...textItem("no id yet") });

    const lines = (await readFile(log.path, "utf8")).split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe("");
    expect(Buffer.byteLength(`${lines[0]}\n`)).toBe(appended.bytes);
    expect(JSON.parse(lines[0]!)).toMatchObject({ id: "item-1", item: big });
    expect(await log.read("item-1")).toEqual(big);
    expect(await log.read(second.id)).toEqual(second.item);
    expect(await log.read("never-logged")).toBeNull();
  });

  it("reads null before anything was logged", async () => {
    const log = createThreadLog({ root: freshRoot(), jobId: "job-1", alias: "main" });
    expect(await log.read("anything")).toBeNull();
    expect(await collect(log)).toEqual({ records: [], problems: [] });
  });

  it("returns the last payload logged under an id", async () => {
    const log = createThreadLog({ root: freshRoot(), jobId: "job-1", alias: "main" });
    await log.append(textItem("first", { id: "same" }));
    await log.append(textItem("other", { id: "same-but-longer" }));
    await log.append(textItem("second", { id: "same" }));
    expect((await log.read("same"))?.content[0]?.text).toBe("second");
    expect((await log.read("same-but-longer"))?.content[0]?.text).toBe("other");
  });

  it("fsyncs every append unless told not to", async () => {
    const probe = await open(join(base, "probe"), "w");
    const sync = vi.spyOn(Object.getPrototypeOf(probe), "sync");
    await probe.close();
    const log = createThreadLog({ root: freshRoot(), jobId: "job-1", alias: "main" });
    await log.append(textItem("a"));
    // The first append also makes the new file's directory entries durable, up to <root>/jobs.
    expect(sync).toHaveBeenCalledTimes(1 + 5);
    sync.mockClear();
    await log.append(textItem("b"));
    await log.append(textItem("c"));
    expect(sync).toHaveBeenCalledTimes(2);
    sync.mockClear();
    await createThreadLog({ root: freshRoot(), jobId: "job-1", alias: "main", fsync: false }).append(
      textItem("c"),
    );
    expect(sync).not.toHaveBeenCalled();
  });

  it("keeps every line whole under 60 concurrent appends", async () => {
    const log = createThreadLog({ root: freshRoot(), jobId: "job-1", alias: "main" });
    const items = Array.from({ length: 60 }, (_, i) => textItem(String(i).repeat(i * 997), { id: `c-${i}` }));
    await Promise.all(items.map((item) => log.append(item)));
    const { records, problems } = await collect(log);
    expect(problems).toEqual([]);
    expect(records.map((record) => record.id).sort()).toEqual(items.map((item) => item.id).sort());
    for (const item of items) expect(await log.read(item.id!)).toEqual(item);
  });
});

describe("prepareForPosting", () => {
  it("logs the full item first, then returns it fitted to the budget, pointing at the log", async () => {
    const log = createThreadLog({ root: freshRoot(), jobId: "job-1", alias: "main" });
    const item = toolResultItem({ invocationId: "tu_1", output: "o".repeat(500_000) });
    const posted = await log.prepareForPosting(item);
    expect(measureThreadItem(posted)).toBeLessThanOrEqual(DEFAULT_BUDGET_BYTES);
    expect(posted.metadata).toMatchObject({
      truncated: true,
      truncated_fields: ["tool.output"],
      local_log: log.localLogPath,
    });
    expect((posted.metadata as { tool: { output: string } }).tool.output).toContain(
      `see ${log.localLogPath}]`,
    );
    expect(posted.id).toBeDefined();
    expect(await log.read(posted.id!)).toEqual({ id: posted.id, ...item });
  });

  it("logs and returns a hand-made item with every string sanitized, as it will be posted", async () => {
    const log = createThreadLog({ root: freshRoot(), jobId: "job-1", alias: "main" });
    const raw = {
      id: "raw",
      content: [{ type: "text", text: "\u001b[32mok\u001b[0m\u0007" }],
      metadata: { type: "thinking", text: "a\u0000b\u202ec", full_text_length: 3 },
    } as ThreadItem;
    const clean = {
      id: "raw",
      content: [{ type: "text", text: "ok" }],
      metadata: { type: "thinking", text: "abc", full_text_length: 3 },
    };
    expect(await log.prepareForPosting(raw)).toEqual(clean);
    expect(await log.read("raw")).toEqual(clean);
    expect(await readFile(log.path, "utf8")).not.toMatch(/\\u001b|\\u0007|\\u0000|\u202e/);
  });

  it("logs an item that fits too, and returns it unchanged", async () => {
    const log = createThreadLog({ root: freshRoot(), jobId: "job-1", alias: "main" });
    const posted = await log.prepareForPosting(textItem("short", { id: "s-1" }));
    expect(posted).toEqual(textItem("short", { id: "s-1" }));
    expect(await log.read("s-1")).toEqual(posted);
  });

  it("logs even an item too large to post, so that nothing is lost", async () => {
    const log = createThreadLog({ root: freshRoot(), jobId: "job-1", alias: "main" });
    const item = { id: "huge", ...statusItem({ status: "waiting", detail: "d".repeat(400_000) }) };
    await expectStowageError(log.prepareForPosting(item), "TOO_LARGE");
    expect(await log.read("huge")).toEqual(item);
  });

  it("a bad budget fails before anything is logged", async () => {
    const log = createThreadLog({ root: freshRoot(), jobId: "job-1", alias: "main" });
    await expectStowageError(
      log.prepareForPosting(textItem("x", { id: "b" }), { budgetBytes: 0 }),
      "INVALID_INPUT",
    );
    expect(await log.read("b")).toBeNull();
  });
});

describe("hostile input", () => {
  const extraHostileIds = [
    { value: "%2e%2e", why: "percent-encoded traversal" },
    { value: ".hidden", why: "hidden name" },
    { value: "a b", why: "space" },
    { value: "job/1", why: "slash" },
    { value: "ünïcødé", why: "non-ASCII" },
    { value: "x".repeat(129), why: "129 characters" },
  ];

  it.each([...HOSTILE_KEYS, ...extraHostileIds])("rejects jobId and alias $why", async ({ value }) => {
    const root = freshRoot();
    for (const options of [
      { root, jobId: value, alias: "main" },
      { root, jobId: "job-1", alias: value },
    ]) {
      await expectStowageError(() => createThreadLog(options as never), "INVALID_INPUT");
    }
    await expect(readFile(join(root, "jobs"))).rejects.toThrow();
  });

  it.each([
    ["empty", ""],
    ["NUL", "/tmp/a\u0000b"],
    ["a number", 7],
  ])("rejects a root that is %s", async (_, root) => {
    await expectStowageError(
      () => createThreadLog({ root: root as never, jobId: "j", alias: "a" }),
      "INVALID_INPUT",
    );
  });

  it("accepts every safe id as jobId and alias, `:` and `@` included", async () => {
    const log = createThreadLog({ root: freshRoot(), jobId: "job:1@host", alias: "a.b_c-d" });
    await log.append(textItem("x", { id: "x" }));
    expect(log.localLogPath).toBe("job:1@host/threads/a.b_c-d/logs/thread.log");
    expect(await log.read("x")).toEqual(textItem("x", { id: "x" }));
  });

  it.each(["../x", "a/b", "", "a\u0000", "x".repeat(201), " lead"])(
    "rejects the item id %j on append and read",
    async (id) => {
      const log = createThreadLog({ root: freshRoot(), jobId: "job-1", alias: "main" });
      await expectStowageError(log.read(id), "INVALID_INPUT");
      await expectStowageError(
        log.append({ id, content: [{ type: "text", text: "x" }] } as ThreadItem),
        "INVALID_INPUT",
      );
      await expect(readFile(log.path)).rejects.toThrow();
    },
  );

  it("rejects an invalid or unserializable item and writes nothing", async () => {
    const log = createThreadLog({ root: freshRoot(), jobId: "job-1", alias: "main" });
    await expectStowageError(log.append({ content: [] } as never), "INVALID_INPUT");
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    await expectStowageError(
      log.append({ content: [{ type: "text", text: "x" }], extra: cyclic }),
      "INVALID_INPUT",
    );
    await expect(readFile(log.path)).rejects.toThrow();
  });

  it("an aborted signal fails with ABORTED and writes nothing", async () => {
    const log = createThreadLog({ root: freshRoot(), jobId: "job-1", alias: "main" });
    await expectStowageError(log.append(textItem("x"), { signal: AbortSignal.abort() }), "ABORTED");
    await log.append(textItem("y", { id: "y" }));
    await expectStowageError(log.read("y", { signal: AbortSignal.abort() }), "ABORTED");
    expect((await collect(log)).records).toHaveLength(1);
  });

  it("a file where a directory should be fails with CONFLICT", async () => {
    const root = freshRoot();
    await mkdir(join(root, "jobs", "job-1"), { recursive: true });
    await writeFile(join(root, "jobs", "job-1", "threads"), "not a directory");
    await expectStowageError(
      createThreadLog({ root, jobId: "job-1", alias: "main" }).append(textItem("x")),
      "CONFLICT",
    );
  });
});

describe("damaged logs", () => {
  it("a torn last line (crash mid-write) is reported, and the next append starts a new line", async () => {
    const log = createThreadLog({ root: freshRoot(), jobId: "job-1", alias: "main" });
    await log.append(textItem("before", { id: "before" }));
    await appendFile(log.path, '{"id":"torn","at":"2025-11-03T09:00:00.000Z","item":{"content":[{"type":"te');
    expect(await collect(log)).toMatchObject({
      records: [{ id: "before" }],
      problems: [{ line: 2, message: expect.stringContaining("unterminated last line") }],
    });
    await log.append(textItem("after", { id: "after" }));
    expect(await log.read("after")).toEqual(textItem("after", { id: "after" }));
    expect(await log.read("before")).toEqual(textItem("before", { id: "before" }));
    await expectStowageError(log.read("torn"), "INTEGRITY");
    const { records, problems } = await collect(log);
    expect(records.map((record) => record.id)).toEqual(["before", "after"]);
    expect(problems).toEqual([{ line: 2, message: expect.stringContaining("not valid JSON") }]);
  });

  it("skips and reports garbage and records with invalid items, keeping the rest", async () => {
    const log = createThreadLog({ root: freshRoot(), jobId: "job-1", alias: "main" });
    await log.append(textItem("one", { id: "one" }));
    await appendFile(
      log.path,
      'garbage\u0000\n["an array"]\n{"id":"bad","at":"x","item":{"content":"nope"}}\n\n',
    );
    await log.append(textItem("two", { id: "two" }));
    const { records, problems } = await collect(log);
    expect(records.map((record) => record.id)).toEqual(["one", "two"]);
    expect(problems.map((problem) => problem.line)).toEqual([2, 3, 4]);
    expect(problems[2]!.message).toContain("content");
    await expectStowageError(log.read("bad"), "INTEGRITY");
  });
});
