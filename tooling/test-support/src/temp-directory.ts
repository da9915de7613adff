import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";

/**
 * A fresh directory `<os tmpdir>/<prefix><random>` for one test file, removed with everything in
 * it after the file's tests. Call it at the top level of the test file.
 */
export async function tempDirectory(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  afterAll(() => rm(dir, { recursive: true, force: true }));
  return dir;
}
