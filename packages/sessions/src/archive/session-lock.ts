import { open, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { errnoOf, StowageError, throwIfAborted } from "@stowage/core";
import { TEMP_FILE_PREFIX } from "@stowage/core/fs";

/** How long a restore waits for another restore of the same session to finish its swap. */
export const RESTORE_LOCK_TIMEOUT_MS = 30_000;
/** A lock file older than this was left by a crashed process and is taken over. */
export const RESTORE_LOCK_STALE_MS = 60_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs `action` holding a lock file in `directory` for `name`, so that two processes restoring
 * the same session swap their files one after the other, never interleaved. The lock is a file
 * created with O_EXCL; one left by a crash is taken over once older than
 * {@link RESTORE_LOCK_STALE_MS}.
 */
export async function withSessionLock<T>(
  directory: string,
  name: string,
  action: () => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  const path = join(directory, `${TEMP_FILE_PREFIX}lock-${name}`);
  const deadline = Date.now() + RESTORE_LOCK_TIMEOUT_MS;
  for (;;) {
    throwIfAborted(signal, "restore session lock");
    try {
      const handle = await open(path, "wx", 0o600);
      await handle.close();
      break;
    } catch (err) {
      if (errnoOf(err) !== "EEXIST") throw err;
    }
    const age = await stat(path).then(
      (info) => Date.now() - info.mtimeMs,
      () => 0,
    );
    if (age > RESTORE_LOCK_STALE_MS) {
      await rm(path, { force: true });
      continue;
    }
    if (Date.now() > deadline) {
      throw new StowageError(
        "UNAVAILABLE",
        `another restore of session ${name} has held its lock for too long`,
        {
          reason: "LOCKED",
        },
      );
    }
    await sleep(10 + Math.random() * 40);
  }
  try {
    return await action();
  } finally {
    await rm(path, { force: true });
  }
}
