import { execFileSync } from "node:child_process";
import { mkdir, readdir } from "node:fs/promises";
import { join } from "node:path";
import { StowageError, type StowageErrorCode } from "@stowage/core";
import { inCi } from "@stowage/test-support";
import { expect } from "vitest";

let sessions = 0;

/** A session file path `<dir>/<timestamp>_<sessionId>.jsonl` (the file is not created). */
export function sessionFileIn(dir: string): string {
  sessions++;
  return join(dir, `2026-01-01T00-00-00-000Z_session${sessions}.jsonl`);
}

/** Resolves to the StowageError `promise` rejected with; fails the test if it resolved. */
export async function rejection(promise: Promise<unknown>): Promise<StowageError> {
  const outcome = await promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  if (outcome.ok)
    throw new Error(`expected a rejection, got ${JSON.stringify(outcome.value)?.slice(0, 200)}`);
  if (!StowageError.is(outcome.error)) throw outcome.error;
  return outcome.error;
}

/** The StowageError `fn` throws synchronously. */
export function thrown(fn: () => unknown): StowageError {
  try {
    fn();
  } catch (err) {
    if (StowageError.is(err)) return err;
    throw err;
  }
  throw new Error("expected a throw");
}

export async function expectCode(
  promise: Promise<unknown>,
  code: StowageErrorCode,
  reason?: string,
): Promise<StowageError> {
  const err = await rejection(promise);
  expect(err.code).toBe(code);
  if (reason !== undefined) expect(err.reason).toBe(reason);
  return err;
}

/** Open file descriptors of this process. */
export async function openFdCount(): Promise<number> {
  return (await readdir("/proc/self/fd")).length;
}

/**
 * Mounts a tmpfs of `size` at `dir` (created). False, with a printed reason, where mounting is
 * impossible outside CI; in CI that is a failure.
 */
export async function mountTmpfs(dir: string, size: string, what: string): Promise<boolean> {
  await mkdir(dir, { recursive: true });
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir], { stdio: "pipe" });
    return true;
  } catch (err) {
    if (inCi) throw err;
    console.warn(
      `[stowage] ${what} skipped: cannot mount a tmpfs here (${(err as Error).message.split("\n")[0]})`,
    );
    return false;
  }
}

export function unmount(dir: string): void {
  execFileSync("umount", [dir]);
}
