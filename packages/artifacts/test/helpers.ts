import { execFileSync } from "node:child_process";
import { mkdir, readdir } from "node:fs/promises";
import { join } from "node:path";
import { inCi } from "@stowage/test-support";

let sessions = 0;

/** A session file path `<dir>/<timestamp>_<sessionId>.jsonl` (the file is not created). */
export function sessionFileIn(dir: string): string {
  sessions++;
  return join(dir, `2026-01-01T00-00-00-000Z_session${sessions}.jsonl`);
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
