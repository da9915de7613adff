// Planted symbolic links below a worker's root: the thread log never writes or reads through one.
import { execFileSync } from "node:child_process";
import { mkdir, readdir, readFile, rename, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expectStowageError } from "@stowage/core/testing";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { textItem } from "../../src/builders/build-items.js";
import { createThreadLog } from "../../src/log/thread-log.js";

const base = await tempDirectory("stowage-thread-log-links-");
let count = 0;

async function setup() {
  const dir = join(base, String(count++));
  const root = join(dir, "root");
  const outside = join(dir, "outside");
  await mkdir(root, { recursive: true });
  await mkdir(outside);
  await writeFile(join(outside, "thread.log"), "outside the root\n");
  return { root, outside, log: createThreadLog({ root, jobId: "job-1", alias: "main", fsync: false }) };
}

async function outsideUnchanged(outside: string): Promise<void> {
  expect(await readdir(outside)).toEqual(["thread.log"]);
  expect(await readFile(join(outside, "thread.log"), "utf8")).toBe("outside the root\n");
}

const item = () => textItem("hello", { id: `item-${count++}` });

// Hostile-input rows: where below the root a link to `outside` is planted.
const PLANTED: ReadonlyArray<[string, string]> = [
  ["the jobs directory", "jobs"],
  ["the job's directory", "jobs/job-1"],
  ["the thread's logs directory", "jobs/job-1/threads/main/logs"],
];

describe("a symbolic link planted below the root", () => {
  it.each(PLANTED)("at %s: appends and reads are FORBIDDEN (SYMLINK_REFUSED)", async (_where, at) => {
    const { root, outside, log } = await setup();
    await mkdir(join(root, at, ".."), { recursive: true });
    await symlink(outside, join(root, at));
    const error = await expectStowageError(log.append(item()), "FORBIDDEN");
    expect(error.reason).toBe("SYMLINK_REFUSED");
    await expectStowageError(log.read("item-x"), "FORBIDDEN");
    await outsideUnchanged(outside);
  });

  it("as the log file itself: appends and reads are FORBIDDEN", async () => {
    const { root, outside, log } = await setup();
    await mkdir(join(root, "jobs/job-1/threads/main/logs"), { recursive: true });
    await symlink(join(outside, "thread.log"), join(root, "jobs/job-1/threads/main/logs/thread.log"));
    await expectStowageError(log.append(item()), "FORBIDDEN", "SYMLINK_REFUSED");
    await expectStowageError(log.read("item-x"), "FORBIDDEN", "SYMLINK_REFUSED");
    await outsideUnchanged(outside);
  });

  it("swapped in after the first append: the next append is refused", async () => {
    const { root, outside, log } = await setup();
    await log.append(item());
    const threads = join(root, "jobs/job-1/threads");
    await rename(threads, `${threads}-moved`);
    await symlink(outside, threads);
    await expectStowageError(log.append(item()), "FORBIDDEN", "SYMLINK_REFUSED");
    await outsideUnchanged(outside);
  });

  it("the root itself may be a link: the caller chose it", async () => {
    const { root } = await setup();
    const link = join(base, `link-${count++}`);
    await symlink(root, link);
    const log = createThreadLog({ root: link, jobId: "job-1", alias: "main", fsync: false });
    const appended = await log.append(item());
    expect(await log.read(appended.id)).toEqual(appended.item);
  });
});

describe("something other than a file planted as the log", () => {
  it("a FIFO is refused at once (NOT_A_REGULAR_FILE), never waited on for a writer", async () => {
    const { root, log } = await setup();
    const logs = join(root, "jobs/job-1/threads/main/logs");
    await mkdir(logs, { recursive: true });
    execFileSync("mkfifo", [join(logs, "thread.log")]);
    await expectStowageError(log.read("item-x"), "FORBIDDEN", "NOT_A_REGULAR_FILE");
  });
});
