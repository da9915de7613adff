/**
 * Resolves on the first SIGINT or SIGTERM, and keeps absorbing both until the process ends.
 * Ctrl-C signals the whole process group, so a command can get SIGINT twice (from the terminal and
 * relayed by `tsx` or pnpm): a second one during the close must not kill it with exit code 130,
 * which pnpm reports as `ELIFECYCLE Command failed`.
 */
export function untilInterrupted(): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => resolve();
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}
