import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { hostname } from "node:os";
import { join } from "node:path";
import { expectStowageError } from "@stowage/core/testing";
import { runChild, spawnChild, tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { connectEmbedded } from "../src/connect-embedded.js";
import { copyEmbeddedDatabase } from "./support/copy-embedded-database.js";

// Each data directory starts as a copy of the run's migrated database: the lock is the subject, not
// a first start (3–7 s of CPU of initdb each).
const base = await tempDirectory("stowage-data-dir-lock-");
const HOLD = new URL("./children/hold-data-dir.ts", import.meta.url);
const OPEN = new URL("./children/open-data-dir.ts", import.meta.url);

/** Starts a process holding `dataDir` open; resolves once it has stored its row. */
async function holder(dataDir: string, row: string): Promise<ChildProcess> {
  const child = spawnChild(HOLD, [dataDir, row], { stderr: "ignore" });
  let out = "";
  child.stdout!.setEncoding("utf8");
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (chunk: string) => {
      out += chunk;
      if (out.includes("ready")) resolve();
    });
    child.on("exit", (code) => reject(new Error(`holder exited early with ${code}`)));
  });
  return child;
}

async function openOnce(dataDir: string, row: string): Promise<Record<string, unknown>> {
  const result = await runChild(OPEN, [dataDir, row]);
  return { exit: result.code, ...(JSON.parse(result.stdout || "{}") as Record<string, unknown>) };
}

describe("connectEmbedded locks its data directory", () => {
  it("a second connection in this process gets DATA_DIR_LOCKED until the first closes", async () => {
    const dataDir = join(base, "same-process");
    await copyEmbeddedDatabase(dataDir);
    const first = await connectEmbedded({ dataDir });
    const err = await expectStowageError(connectEmbedded({ dataDir }), "UNAVAILABLE", "DATA_DIR_LOCKED");
    expect(err.details).toEqual({ pid: process.pid, hostname: hostname(), since: expect.any(String) });
    await first.close();
    const second = await connectEmbedded({ dataDir });
    await second.close();
  });

  it("a second process fails loudly, naming the holder; after the holder exits or is killed, it opens, no row lost", async () => {
    const dataDir = join(base, "two-processes");
    await copyEmbeddedDatabase(dataDir);
    const first = await holder(dataDir, "first");
    const refused = await openOnce(dataDir, "refused");
    expect(refused).toMatchObject({ exit: 2, code: "UNAVAILABLE", reason: "DATA_DIR_LOCKED" });
    const details = refused.details as Record<string, unknown>;
    expect(details).toEqual({ pid: first.pid, hostname: hostname(), since: expect.any(String) });
    expect(Number.isNaN(Date.parse(details.since as string))).toBe(false);
    // No path of the server's in what a client may be shown.
    expect(JSON.stringify(details)).not.toContain(base);
    await expectStowageError(connectEmbedded({ dataDir }), "UNAVAILABLE", "DATA_DIR_LOCKED");

    first.kill("SIGTERM");
    expect((await once(first, "exit"))[0]).toBe(0);
    expect(await openOnce(dataDir, "after-exit")).toEqual({
      exit: 0,
      rows: ["rows/after-exit", "rows/first"],
    });

    const killed = await holder(dataDir, "killed");
    killed.kill("SIGKILL");
    await once(killed, "exit");
    expect(await openOnce(dataDir, "after-kill")).toEqual({
      exit: 0,
      rows: ["rows/after-exit", "rows/after-kill", "rows/first", "rows/killed"],
    });
  }, 180_000);
});
