// A directory inside a tree being removed is swapped for a link to an outside directory and
// back, in a loop on a worker thread, while the tree is made and removed a few hundred times:
// a path-based `rm -r` that lists the directory once it is the link deletes the outside file.
// Removals hold each directory they empty open, so the outside file must always survive.
import { existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { startWorkerLoop, tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { artifactsDirFor } from "../../src/layout/session-dir.js";
import { createSessionFiles } from "../../src/session/session-files.js";
import { openRunArtifacts } from "../../src/store/run-artifacts.js";

/** Bounds of each race: this many removals, or this long, whichever ends first. */
const MAX_REMOVALS = 300;
const MAX_RACE_MS = 8_000;

/**
 * For every entry `E` of `root`, steps `E/sub` aside (out of the tree), puts a link to
 * `outside` in its place for a moment (1 ms), then puts both back; all errors are ignored (the tree comes and goes).
 * Counts the swaps that took, and the links that a removal unlinked at `E/sub` (it met the link).
 */
const SWAP_LOOP = `
const { parentPort, workerData } = require("node:worker_threads");
const fs = require("node:fs");
const { root, outside, scratch, flag, maxMs } = workerData;
const aside = scratch + "/aside";
const link = scratch + "/link";
const stop = new Int32Array(flag);
const pause = new Int32Array(new SharedArrayBuffer(4));
const HOLD_MS = 1;
const attempt = (step) => { try { step(); return true; } catch { return false; } };
const deadline = Date.now() + maxMs;
let swaps = 0;
let linksRemoved = -1;
while (Atomics.load(stop, 0) === 0 && Date.now() < deadline) {
  if (!attempt(() => fs.lstatSync(link))) {
    fs.symlinkSync(outside, link);
    linksRemoved++;
  }
  // A directory left aside by a removal that finished meanwhile: the test's own files.
  attempt(() => fs.rmSync(aside, { recursive: true, force: true }));
  let names = [];
  attempt(() => { names = fs.readdirSync(root); });
  for (const name of names) {
    const target = root + "/" + name + "/sub";
    if (!attempt(() => fs.renameSync(target, aside))) continue;
    if (attempt(() => fs.renameSync(link, target))) {
      swaps++;
      // Held there a moment: long enough for a path-based rm to list it and unlink through it.
      Atomics.wait(pause, 0, 0, HOLD_MS);
    }
    attempt(() => fs.renameSync(target, link));
    attempt(() => fs.renameSync(aside, target));
  }
}
parentPort.postMessage({ swaps, linksRemoved });
`;

interface SwapCounts {
  swaps: number;
  linksRemoved: number;
}

function startSwapper(root: string, outside: string, scratch: string) {
  return startWorkerLoop<SwapCounts>(SWAP_LOOP, { root, outside, scratch }, 30_000);
}

/** `root`, plus an outside directory holding the file that must survive, and the swapper's scratch. */
async function arena(prefix: string) {
  const base = await tempDirectory(prefix);
  const root = join(base, "root");
  const outside = join(base, "outside");
  const scratch = join(base, "scratch");
  for (const dir of [root, outside, scratch]) await mkdir(dir);
  const keep = join(outside, "keep.txt");
  await writeFile(keep, "the host's file\n");
  return { base, root, outside, scratch, keep };
}

/** Makes `dir` (absent) appear at once holding `sub/inner.txt`: built beside it, renamed in. */
function plantTree(stage: string, dir: string): void {
  mkdirSync(join(stage, "sub"), { recursive: true });
  writeFileSync(join(stage, "sub", "inner.txt"), "the session's own\n");
  writeFileSync(join(stage, "top.txt"), "the session's own\n");
  renameSync(stage, dir);
}

/** Runs `once` until the bounds, stopping early when the outside file is gone; returns the counts. */
async function race(
  place: Awaited<ReturnType<typeof arena>>,
  once: (round: number) => Promise<void>,
): Promise<SwapCounts & { removals: number; errors: Record<string, number> }> {
  const swapper = startSwapper(place.root, place.outside, place.scratch);
  const errors: Record<string, number> = {};
  let removals = 0;
  let counts: SwapCounts;
  try {
    const until = Date.now() + MAX_RACE_MS;
    for (; removals < MAX_REMOVALS && Date.now() < until && existsSync(place.keep); removals++) {
      try {
        await once(removals);
      } catch (err) {
        const key = `${(err as { code?: string }).code}/${(err as { reason?: string }).reason}`;
        errors[key] = (errors[key] ?? 0) + 1;
      }
    }
  } finally {
    counts = await swapper.stop();
  }
  console.info(`${removals} removals under ${counts.swaps} swaps:`, counts, errors);
  return { ...counts, removals, errors };
}

describe("removals racing a directory of the tree swapped for a link", () => {
  it("SessionFiles.delete never deletes outside the sessions directory", async () => {
    const place = await arena("stowage-removals-race-delete-");
    const sessions = createSessionFiles({ dir: place.root });
    const startedAt = new Date("2026-01-01T10:00:00Z");
    const result = await race(place, async (round) => {
      const session = await sessions.create("s-1", startedAt);
      plantTree(join(place.base, `stage-${round}`), artifactsDirFor(session.sessionFile));
      // A removal that lost every try to the swapper (UNAVAILABLE) is tried again: the next
      // round creates the session anew.
      for (let tries = 0; ; tries++) {
        try {
          await sessions.delete("s-1");
          return;
        } catch (err) {
          if (tries >= 20) throw err;
        }
      }
    });
    expect(existsSync(place.keep)).toBe(true);
    expect(result.swaps).toBeGreaterThan(0);
    expect(result.linksRemoved).toBeGreaterThan(0);
  });

  it("RunArtifacts.dispose never deletes outside its temporary directory", async () => {
    const place = await arena("stowage-removals-race-dispose-");
    const result = await race(place, async () => {
      const run = await openRunArtifacts({ tempRoot: place.root });
      try {
        plantTree(join(run.dir, "stage"), join(run.dir, "sub"));
      } catch {
        // The swapper's link took `sub` first: the removal meets it all the same.
      }
      for (let tries = 0; ; tries++) {
        try {
          await run.dispose();
          return;
        } catch (err) {
          if (tries >= 20) throw err;
        }
      }
    });
    expect(existsSync(place.keep)).toBe(true);
    expect(result.swaps).toBeGreaterThan(0);
    expect(result.linksRemoved).toBeGreaterThan(0);
  });
});
