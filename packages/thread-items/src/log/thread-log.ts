import { Buffer } from "node:buffer";
import { randomUUID } from "node:crypto";
import { type FileHandle, open } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { describeValue, errnoOf, fromSystemError, StowageError, throwIfAborted } from "@stowage/core";
import { ensureDirectory, fsyncDirectory } from "@stowage/core/fs";
import { checkFitOptions, DEFAULT_BUDGET_BYTES, fitToBudget } from "../budget/fit-to-budget.js";
import { assertItemId, assertPathId } from "../schema/ids.js";
import { parseThreadItem, threadItemProblem } from "../schema/parse-thread-item.js";
import type { ThreadItem } from "../schema/thread-item-schema.js";
import { scanLines } from "./line-scanner.js";

/** Name of the log file in `jobs/{jobId}/threads/{alias}/logs/`. */
export const THREAD_LOG_FILE_NAME = "thread.log";

export interface ThreadLogOptions {
  /** The worker's home: the log lives at `<root>/jobs/{jobId}/threads/{alias}/logs/thread.log`. */
  root: string;
  jobId: string;
  alias: string;
  /** fsync every append before it returns. Default true; turn off only in tests of other things. */
  fsync?: boolean;
}

/** One line of the log: the full, untruncated item under its id. */
export interface ThreadLogRecord {
  id: string;
  /** When it was appended (ISO 8601). */
  at: string;
  item: ThreadItem;
}

export interface AppendedItem {
  id: string;
  /** The item as logged: the input with its `id` (assigned when it had none). */
  item: ThreadItem;
  /** Bytes the line took in the log. */
  bytes: number;
}

/** A line of the log that could not be read back. */
export interface ThreadLogProblem {
  line: number;
  message: string;
}

export interface ThreadLog {
  /** Absolute path of the log file. */
  readonly path: string;
  /** The log's path relative to `<root>/jobs/`, as quoted in truncation markers and `metadata.local_log`. */
  readonly localLogPath: string;
  /**
   * Appends the full item as one JSON line in a single `O_APPEND` write, then fsyncs, so that
   * concurrent appenders (other processes included) never interleave partial lines.
   */
  append(item: ThreadItem, options?: { signal?: AbortSignal }): Promise<AppendedItem>;
  /** The full payload logged under `id` (the last one, if logged twice), or null when none is. */
  read(id: string, options?: { signal?: AbortSignal }): Promise<ThreadItem | null>;
  /** Every record in order; unreadable lines are skipped and passed to `onProblem`. */
  records(options?: {
    signal?: AbortSignal;
    onProblem?: (problem: ThreadLogProblem) => void;
  }): AsyncGenerator<ThreadLogRecord>;
  /** Logs the full item, then returns it fitted to the budget: the order a worker must post in. */
  prepareForPosting(
    item: ThreadItem,
    options?: { budgetBytes?: number; signal?: AbortSignal },
  ): Promise<ThreadItem>;
}

const NEWLINE = 0x0a;

function recordPrefix(id: string): Buffer {
  return Buffer.from(`{"id":${JSON.stringify(id)},`);
}

function parseRecord(bytes: Buffer): ThreadLogRecord | string {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString("utf8"));
  } catch (err) {
    return `not valid JSON (${(err as Error).message})`;
  }
  const record = value as Partial<ThreadLogRecord> | null;
  if (typeof record !== "object" || record === null || typeof record.id !== "string") {
    return "not a thread log record (no id)";
  }
  const problem = threadItemProblem(record.item);
  return problem ? `item is invalid at ${problem}` : (record as ThreadLogRecord);
}

// A crash can leave a last line without its newline; a new line must not be glued to it.
async function endsWithNewline(handle: FileHandle): Promise<boolean> {
  const { size } = await handle.stat();
  if (size === 0) return true;
  const last = Buffer.alloc(1);
  await handle.read(last, 0, 1, size - 1);
  return last[0] === NEWLINE;
}

/**
 * The local thread log of one job thread: the full, untruncated payload of every item, written
 * before the item is posted, so that whatever the budget cut is recoverable from the worker's disk.
 */
export function createThreadLog(options: ThreadLogOptions): ThreadLog {
  if (typeof options !== "object" || options === null) {
    throw new StowageError(
      "INVALID_INPUT",
      `createThreadLog options must be an object, got ${describeValue(options)}`,
    );
  }
  const { root, jobId, alias, fsync = true } = options;
  if (typeof root !== "string" || root === "" || root.includes("\u0000")) {
    throw new StowageError(
      "INVALID_INPUT",
      `root must be a non-empty directory path without NUL, got ${describeValue(root)}`,
    );
  }
  assertPathId(jobId, "jobId");
  assertPathId(alias, "alias");
  if (typeof fsync !== "boolean") {
    throw new StowageError("INVALID_INPUT", `fsync must be a boolean, got ${describeValue(fsync)}`);
  }
  const jobsDirectory = join(resolve(root), "jobs");
  const localLogPath = `${jobId}/threads/${alias}/logs/${THREAD_LOG_FILE_NAME}`;
  const path = join(jobsDirectory, ...localLogPath.split("/"));
  const directory = dirname(path);
  let directoryDurable = false;

  async function openForAppend(): Promise<FileHandle> {
    try {
      return await open(path, "a+", 0o644);
    } catch (err) {
      if (errnoOf(err) !== "ENOENT") throw err;
    }
    await ensureDirectory(directory);
    return open(path, "a+", 0o644);
  }

  // Once per log object: the new file's (and new directories') entries must survive a crash too.
  async function makeDirectoryDurable(): Promise<void> {
    if (!fsync || directoryDurable) return;
    for (let dir = directory; dir.startsWith(jobsDirectory); dir = dirname(dir)) await fsyncDirectory(dir);
    directoryDurable = true;
  }

  async function append(
    item: ThreadItem,
    appendOptions: { signal?: AbortSignal } = {},
  ): Promise<AppendedItem> {
    const { signal } = appendOptions;
    parseThreadItem(item);
    const id = item.id ?? randomUUID();
    assertItemId(id);
    const { id: _absent, ...rest } = item;
    const logged: ThreadItem = item.id === id ? item : { id, ...rest };
    let json: string;
    try {
      json = JSON.stringify(logged);
    } catch (err) {
      throw new StowageError(
        "INVALID_INPUT",
        `thread item must be JSON-serializable: ${(err as Error).message}`,
        {
          cause: err,
        },
      );
    }
    const line = `{"id":${JSON.stringify(id)},"at":"${new Date().toISOString()}","item":${json}}\n`;
    throwIfAborted(signal, `append to thread log ${path}`);
    let handle: FileHandle | undefined;
    try {
      handle = await openForAppend();
      const body = Buffer.from((await endsWithNewline(handle)) ? line : `\n${line}`);
      // One write(2) on an O_APPEND descriptor: the kernel places the whole line at the end.
      const { bytesWritten } = await handle.write(body, 0, body.length, null);
      if (bytesWritten !== body.length) {
        throw new StowageError(
          "STORAGE_FULL",
          `append to thread log ${path}: only ${bytesWritten} of ${body.length} bytes were written`,
        );
      }
      if (fsync) await handle.sync();
      await handle.close();
      handle = undefined;
      await makeDirectoryDurable();
      return { id, item: logged, bytes: body.length };
    } catch (err) {
      await handle?.close().catch(() => {});
      throw fromSystemError(err, `append to thread log ${path}`);
    }
  }

  async function read(id: string, readOptions: { signal?: AbortSignal } = {}): Promise<ThreadItem | null> {
    assertItemId(id);
    let found: ThreadItem | null = null;
    let corrupt: string | undefined;
    for await (const line of scanLines(path, { prefix: recordPrefix(id), ...readOptions })) {
      const record = parseRecord(line.bytes);
      if (typeof record === "string") corrupt = `line ${line.number}: ${record}`;
      else if (record.id === id) found = record.item;
    }
    if (found === null && corrupt !== undefined) {
      throw new StowageError(
        "INTEGRITY",
        `thread log ${path} holds item ${id} only in an unreadable line (${corrupt})`,
      );
    }
    return found;
  }

  async function* records(
    recordOptions: { signal?: AbortSignal; onProblem?: (problem: ThreadLogProblem) => void } = {},
  ): AsyncGenerator<ThreadLogRecord> {
    const { signal, onProblem } = recordOptions;
    for await (const line of scanLines(path, signal ? { signal } : {})) {
      const record = parseRecord(line.bytes);
      if (typeof record !== "string") yield record;
      else
        onProblem?.({
          line: line.number,
          message: line.complete ? record : `unterminated last line: ${record}`,
        });
    }
  }

  async function prepareForPosting(
    item: ThreadItem,
    prepareOptions: { budgetBytes?: number; signal?: AbortSignal } = {},
  ): Promise<ThreadItem> {
    const { budgetBytes = DEFAULT_BUDGET_BYTES, signal } = prepareOptions;
    // A bad budget must fail before anything is logged.
    checkFitOptions({ budgetBytes, localLogPath });
    const appended = await append(item, signal ? { signal } : {});
    return fitToBudget(appended.item, { budgetBytes, localLogPath });
  }

  return { path, localLogPath, append, read, records, prepareForPosting };
}
