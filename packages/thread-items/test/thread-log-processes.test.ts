import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { runChild, spawnChild, tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { createThreadLog, type ThreadLogProblem, textItem } from "../src/index.js";
import { appendedItem } from "./children/appended-items.js";

const base = await tempDirectory("stowage-thread-log-processes-");
const appendMany = new URL("./children/append-many.ts", import.meta.url);
const appendHuge = new URL("./children/append-huge.ts", import.meta.url);

describe("two processes appending to one thread log", () => {
  it("never interleave partial lines: every line is whole and every payload reads back", async () => {
    const root = join(base, "shared");
    const count = 120;
    const [a, b] = await Promise.all([
      runChild(appendMany, [root, "a", String(count)]),
      runChild(appendMany, [root, "b", String(count)]),
    ]);
    expect([a.stderr, b.stderr]).toEqual(["", ""]);
    expect([a.code, b.code]).toEqual([0, 0]);

    const log = createThreadLog({ root, jobId: "job-shared", alias: "main" });
    const problems: ThreadLogProblem[] = [];
    const order: string[] = [];
    for await (const record of log.records({ onProblem: (problem) => problems.push(problem) })) {
      order.push(record.id);
      const [writer, index] = record.id.split("-") as [string, string];
      expect(record.item).toEqual(appendedItem(writer, Number(index)));
    }
    expect(problems).toEqual([]);
    expect(order).toHaveLength(2 * count);
    // Each writer's own lines stay in its order.
    for (const writer of ["a", "b"]) {
      const mine = order.filter((id) => id.startsWith(`${writer}-`));
      expect(mine).toEqual(Array.from({ length: count }, (_, index) => `${writer}-${index}`));
    }
    const text = await readFile(log.path, "utf8");
    expect(text.endsWith("\n")).toBe(true);
    expect(text.split("\n").filter((line) => line !== "")).toHaveLength(2 * count);
    expect(await log.read("b-70")).toEqual(appendedItem("b", 70));
  });
});

describe("a process killed while appending", () => {
  it("leaves at most one torn last line, which readers report and the next append steps over", async () => {
    const root = join(base, "crash");
    const log = createThreadLog({ root, jobId: "job-crash", alias: "main" });
    await log.append(textItem("before the crash", { id: "before" }));
    const { size: before } = await stat(log.path);

    const megabytes = 100;
    const child = spawnChild(appendHuge, [root, String(megabytes)]);
    let exited = false;
    child.on("exit", () => {
      exited = true;
    });
    // Kill as soon as the big line starts reaching the file.
    let killedAt = before;
    while (!exited) {
      const { size } = await stat(log.path);
      if (size > before) {
        child.kill("SIGKILL");
        killedAt = size;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await new Promise((resolve) => (exited ? resolve(undefined) : child.on("exit", resolve)));

    const problems: ThreadLogProblem[] = [];
    const ids: string[] = [];
    for await (const record of log.records({ onProblem: (problem) => problems.push(problem) }))
      ids.push(record.id);
    const { size: after } = await stat(log.path);
    const torn = after > before && problems.length === 1;
    console.info(`[thread-items] killed at ${killedAt} bytes; log ${after} bytes; torn line: ${torn}`);
    if (torn) {
      expect(problems[0]).toMatchObject({
        line: 2,
        message: expect.stringContaining("unterminated last line"),
      });
      expect(ids).toEqual(["before"]);
    } else {
      expect(problems).toEqual([]);
    }

    await log.append(textItem("after the crash", { id: "after" }));
    expect(await log.read("after")).toEqual(textItem("after the crash", { id: "after" }));
    expect(await log.read("before")).toEqual(textItem("before the crash", { id: "before" }));
    const afterIds: string[] = [];
    for await (const record of log.records()) afterIds.push(record.id);
    expect(afterIds.at(-1)).toBe("after");
    expect(afterIds[0]).toBe("before");
  });
});
