// A barrier between child processes: each leaves a file named after itself in `dir`, then waits
// until every writer named in `writers` (comma-separated) has left one, so that all start at once.
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

export async function passBarrier(dir: string, writer: string, writers: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, writer), "");
  while (!writers.split(",").every((name) => existsSync(join(dir, name)))) await sleep(1);
}
