// The agent whose session is restored owns the project directory, so it also sees the restore's
// staging directory there: while restores run again and again, a worker thread watches for it and
// swaps its `new` (staged files) or `old` (replaced files) directory for a link to a directory
// outside. No restore may write, move or delete anything there.
import { mkdir, mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { restoreSession } from "../../src/archive/restore-session.js";
import { STAGING_PREFIX } from "../../src/archive/stale-staging.js";
import { buildArchive, type RawFile } from "../build-archive.js";

const base = await tempDirectory("stowage-restore-race-");

const sessionId = "6e5d4c3b-2a19-4807-b6a5-948372615041";
const projectKey = "-workspace-app";
/** Bounds of each race: this many restores, or this long, whichever ends first. */
const MAX_RESTORES = 400;
const MAX_RACE_MS = 8_000;

const file = (path: string, content: string): RawFile => ({
  path,
  content: new TextEncoder().encode(content),
});

/**
 * The attacker's loop, on a worker thread beside the restores: each staging directory it sees gets
 * its `which` directory renamed away and a link to `outside` put in its place. Plain CommonJS.
 */
const STAGING_SWAPPER = `
const { parentPort, workerData } = require("node:worker_threads");
const fs = require("node:fs");
const { projectDir, outside, which, prefix, flag, maxMs } = workerData;
const stop = new Int32Array(flag);
const deadline = Date.now() + maxMs;
let swaps = 0;
while (Atomics.load(stop, 0) === 0 && Date.now() < deadline) {
  let names;
  try { names = fs.readdirSync(projectDir); } catch { continue; }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const victim = projectDir + "/" + name + "/" + which;
    try { fs.renameSync(victim, victim + ".moved"); } catch { continue; }
    try { fs.symlinkSync(outside, victim); swaps++; } catch {}
  }
}
parentPort.postMessage(swaps);
`;

function startStagingSwapper(projectDir: string, outside: string, which: "new" | "old") {
  const flag = new SharedArrayBuffer(4);
  const worker = new Worker(STAGING_SWAPPER, {
    eval: true,
    workerData: { projectDir, outside, which, prefix: STAGING_PREFIX, flag, maxMs: 30_000 },
  });
  const done = new Promise<number>((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
  });
  done.catch(() => {});
  return {
    async stop(): Promise<number> {
      Atomics.store(new Int32Array(flag), 0, 1);
      try {
        return await done;
      } finally {
        await worker.terminate();
      }
    },
  };
}

describe("restoreSession while the agent swaps its staging directory for a link", () => {
  it.each(["new", "old"] as const)(
    "never writes, moves or deletes outside the target (staging/%s swapped)",
    async (which) => {
      const archive = await buildArchive({
        sessionId,
        projectKey,
        files: [
          file(`${sessionId}.jsonl`, '{"type":"user"}\n'),
          file(`${sessionId}/tool-results/t.txt`, "restored tool output\n"),
        ],
      });
      const configDir = await mkdtemp(join(base, `config-${which}-`));
      const projectDir = join(configDir, "projects", projectKey);
      await mkdir(projectDir, { recursive: true });
      const outside = await mkdtemp(join(base, `outside-${which}-`));
      await writeFile(join(outside, "0"), "the host's own file\n");
      await writeFile(join(outside, "1"), "another host file\n");
      // Once, so that later restores replace files (and move the old ones aside).
      await restoreSession(archive, { configDir, projectKey, fsync: false });

      const swapper = startStagingSwapper(projectDir, outside, which);
      const outcomes: Record<string, number> = {};
      const strays = new Set<string>();
      let swaps = 0;
      try {
        const until = Date.now() + MAX_RACE_MS;
        for (let n = 0; n < MAX_RESTORES && Date.now() < until; n++) {
          let outcome: string;
          try {
            await restoreSession(archive, { configDir, projectKey, fsync: false });
            outcome = "restored";
          } catch (err) {
            outcome = `${(err as { code?: string }).code}/${(err as { reason?: string }).reason}`;
          }
          outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
          for (const name of await readdir(outside)) if (name !== "0" && name !== "1") strays.add(name);
        }
      } finally {
        swaps = await swapper.stop();
        console.info(`restores with staging/${which} swapped ${swaps} times:`, outcomes);
      }
      expect(swaps).toBeGreaterThan(0);
      expect([...strays]).toEqual([]);
      // Named as the staged and the replaced files are: a rename through the link would replace them.
      expect(await readFile(join(outside, "0"), "utf8")).toBe("the host's own file\n");
      expect(await readFile(join(outside, "1"), "utf8")).toBe("another host file\n");
      expect(outcomes.restored ?? 0).toBeGreaterThan(0);
    },
  );
});
