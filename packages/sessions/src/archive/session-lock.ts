import { open, rm, stat, utimes } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { errnoOf, StowageError, throwIfAborted } from "@stowage/core";
import { TEMP_FILE_PREFIX } from "@stowage/core/fs";

/** How a session lock's file is named in its directory: this prefix, then the session's name. */
export const SESSION_LOCK_PREFIX = `${TEMP_FILE_PREFIX}lock-`;

/** How long a restore waits for another restore of the same session to finish its swap. */
const RESTORE_LOCK_TIMEOUT_MS = 30_000;
/** A lock file older than this was left by a crashed process and is taken over. */
const RESTORE_LOCK_STALE_MS = 60_000;

/**
 * Runs `action` holding a lock file in `directory` for `name`, so that two processes restoring
 * the same session swap their files one after the other, never interleaved. The lock is a file
 * created with O_EXCL, its modification time renewed while `action` runs; one left by a crash
 * (not renewed for {@link RESTORE_LOCK_STALE_MS}) is taken over. A restore waits `waitMs`
 * (default {@link RESTORE_LOCK_TIMEOUT_MS}) for another to finish, then fails with UNAVAILABLE
 * (reason `LOCKED`).
 */
export async function withSessionLock<T>(
  directory: string,
  name: string,
  action: () => Promise<T>,
  signal?: AbortSignal,
  waitMs = RESTORE_LOCK_TIMEOUT_MS,
): Promise<T> {
  const path = join(directory, `${SESSION_LOCK_PREFIX}${name}`);
  const deadline = Date.now() + waitMs;
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
  // Renewed well within the stale age, so that a long action (an OpenCode import runs the CLI
  // several times) is never taken for a crash.
  const renew = setInterval(() => {
    const now = new Date();
    utimes(path, now, now).catch(() => {});
  }, RESTORE_LOCK_STALE_MS / 4);
  renew.unref();
  try {
    return await action();
  } finally {
    clearInterval(renew);
    await rm(path, { force: true });
  }
}
