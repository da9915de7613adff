import { join, resolve } from "node:path";
import { assertSafeId, describeValue, StowageError } from "@stowage/core";

/** Name of the log file in `<root>/jobs/{jobId}/threads/{alias}/logs/`. */
const THREAD_LOG_FILE_NAME = "thread.log";

/** One job thread: both ids are safe ids (core's `assertSafeId`), since both become directory names. */
export interface ThreadRef {
  jobId: string;
  alias: string;
}

// Every path of a thread is built here, from `<root>/jobs` down, so no caller needs `..` arithmetic.
const THREADS_DIRECTORY_NAME = "threads";

/** Checks `root` (a non-empty directory path without NUL) and returns `<root>/jobs`, absolute. */
export function jobsDirectoryOf(root: unknown): string {
  if (typeof root !== "string" || root === "" || root.includes("\u0000")) {
    throw new StowageError(
      "INVALID_INPUT",
      `root must be a non-empty directory path without NUL, got ${describeValue(root)}`,
    );
  }
  return join(resolve(root), "jobs");
}

/** Throws INVALID_INPUT unless `thread` is a `{ jobId, alias }` of safe ids. */
export function assertThreadRef(thread: unknown): asserts thread is ThreadRef {
  if (typeof thread !== "object" || thread === null) {
    throw new StowageError("INVALID_INPUT", `thread must be { jobId, alias }, got ${describeValue(thread)}`);
  }
  const { jobId, alias } = thread as Partial<ThreadRef>;
  assertSafeId(jobId, "jobId");
  assertSafeId(alias, "alias");
}

/** The thread log's path relative to `<root>/jobs/` (always with `/`), as quoted in truncation markers and `metadata.local_log`. */
export function localLogPathOf({ jobId, alias }: ThreadRef): string {
  return `${jobId}/${THREADS_DIRECTORY_NAME}/${alias}/logs/${THREAD_LOG_FILE_NAME}`;
}

/** Absolute path of the thread log under `jobsDirectory`. */
export function threadLogPathOf(jobsDirectory: string, thread: ThreadRef): string {
  return join(jobsDirectory, ...localLogPathOf(thread).split("/"));
}
