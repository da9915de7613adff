import { runChild } from "@stowage/test-support";
import { expect } from "vitest";
import { seedEmbeddedDatabase } from "../../../apps/reference/test/support/seed-embedded-database.js";

/** The `stowage` executable of the reference app, started from its sources as a user runs it. */
const STOWAGE_BIN = new URL("../../../apps/reference/src/bin.ts", import.meta.url);

/**
 * Runs `stowage <args> --json` with its own embedded data directory (no server, no database
 * URL) and `env` (default: PATH and this process's HOME), expects it to succeed and returns
 * what it printed as JSON. For the end-to-end tests that capture and restore with the CLI. A new
 * data directory starts as a copy of the run's migrated embedded database (the app's global
 * setup, in this package's vitest.config.ts), not from initdb: 3–4 s of CPU a directory.
 */
export async function stowageJson(
  dataDir: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME },
): Promise<Record<string, unknown>> {
  await seedEmbeddedDatabase(dataDir);
  const run = await runChild(STOWAGE_BIN, [...args, "--json"], {
    env: { ...env, STOWAGE_DATA_DIR: dataDir },
  });
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as Record<string, unknown>;
}
