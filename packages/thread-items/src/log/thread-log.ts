import { Buffer } from "node:buffer";
import { randomUUID } from "node:crypto";
import { basename, dirname } from "node:path";
import { assertSafeId, describeValue, fromSystemError, StowageError, throwIfAborted } from "@stowage/core";
import { descriptorPath, openFileBeneath } from "@stowage/core/fs";
import { checkFitOptions, DEFAULT_BUDGET_BYTES, fitToBudget } from "../budget/fit-to-budget.js";
import { MAX_ITEM_ID_LENGTH } from "../schema/item-id.js";
import { parseThreadItem, threadItemProblem } from "../schema/parse-thread-item.js";
import { sanitizeJsonStrings } from "../schema/sanitize-json-strings.js";
import type { ThreadItem } from "../schema/thread-item-schema.js";
import { createLineAppender } from "./line-appender.js";
import { type ScannedLine, type ScanOptions, scanLines } from "./line-scanner.js";
import { assertThreadRef, jobsDirectoryOf, localLogPathOf, threadLogPathOf } from "./thread-layout.js";

/** Options of `createThreadLog`. */
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

/** What `append` logged. */
export interface AppendedItem {
  id: string;
  /** The item as logged: the input with its `id` (assigned when it had none), every string sanitized. */
  item: ThreadItem;
  /** Bytes the line took in the log. */
  bytes: number;
}

/** A line of the log that could not be read back. */
export interface ThreadLogProblem {
  line: number;
  message: string;
}

/** The local thread log of one job thread (see `createThreadLog`). */
export interface ThreadLog {
  /** Absolute path of the log file. */
  readonly path: string;
  /** The log's path relative to `<root>/jobs/`, as quoted in truncation markers and `metadata.local_log`. */
  readonly localLogPath: string;
  /**
   * Appends the full item, every string sanitized (core's `sanitizeText`), as one JSON line in a
   * single `O_APPEND` write, then fsyncs, so that concurrent appenders (other processes included)
   * never interleave partial lines.
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
  const jobsDirectory = jobsDirectoryOf(root);
  const thread = { jobId, alias };
  assertThreadRef(thread);
  if (typeof fsync !== "boolean") {
    throw new StowageError("INVALID_INPUT", `fsync must be a boolean, got ${describeValue(fsync)}`);
  }
  const localLogPath = localLogPathOf(thread);
  const path = threadLogPathOf(jobsDirectory, thread);
  // Everything below the root is reached without following a link (the root itself may be one).
  const rootDirectory = dirname(jobsDirectory);
  const relativePath = `${basename(jobsDirectory)}/${localLogPath}`;
  const appender = createLineAppender({ root: rootDirectory, relativePath, fsync });

  /** The log's lines, read from the file opened below the root without following a link. */
  async function* lines(scan: ScanOptions): AsyncGenerator<ScannedLine> {
    // A FIFO planted as the log is refused at once (NOT_A_REGULAR_FILE), never waited on.
    const file = await openFileBeneath(rootDirectory, relativePath.split("/")).catch((err: unknown) => {
      throw fromSystemError(err, `read thread log ${path}`);
    });
    if (!file) return;
    try {
      yield* scanLines(descriptorPath(file.handle.fd, path), scan);
    } finally {
      await file.handle.close();
    }
  }

  async function append(
    item: ThreadItem,
    appendOptions: { signal?: AbortSignal } = {},
  ): Promise<AppendedItem> {
    const { signal } = appendOptions;
    parseThreadItem(item);
    const id = item.id ?? randomUUID();
    assertSafeId(id, "thread item id", MAX_ITEM_ID_LENGTH);
    const { id: _absent, ...rest } = item;
    // Logged as it will be posted: every string sanitized, like every item shown to people and models.
    const logged: ThreadItem = sanitizeJsonStrings(item.id === id ? item : { id, ...rest });
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
    try {
      const bytes = await appender.append(Buffer.from(line));
      return { id, item: logged, bytes };
    } catch (err) {
      throw fromSystemError(err, `append to thread log ${path}`);
    }
  }

  async function read(id: string, readOptions: { signal?: AbortSignal } = {}): Promise<ThreadItem | null> {
    assertSafeId(id, "thread item id", MAX_ITEM_ID_LENGTH);
    let found: ThreadItem | null = null;
    let corrupt: string | undefined;
    for await (const line of lines({ prefix: recordPrefix(id), ...readOptions })) {
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
    for await (const line of lines(signal ? { signal } : {})) {
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
