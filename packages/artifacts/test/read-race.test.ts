// A session's artifacts directory swapped for a link out of the sessions directory and back, in a
// tight loop on a worker thread, while artifact:// and agent:// are read thousands of times: every
// read walks from the root the caller gave, so none may ever return the outside copy.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createArtifactStore, createInternalUrlRouter } from "@stowage/artifacts";
import { startDirectorySwapper, tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { artifactsDirFor } from "../src/layout/session-dir.js";
import { sessionFileIn } from "./helpers.js";

/** Bounds of the race: this many reads, or this long, whichever ends first. */
const MAX_READS = 3_000;
const MAX_RACE_MS = 5_000;

const INSIDE = "the session's own output";
const OUTSIDE = "OUTSIDE the session, never read";

const base = await tempDirectory("stowage-artifacts-race-");

describe("artifact reads racing an artifacts directory swapped for a link", () => {
  it("never return the outside copy", async () => {
    const sessions = join(base, "sessions");
    const outside = join(base, "outside");
    const sessionFile = sessionFileIn(sessions);
    const artifactsDir = artifactsDirFor(sessionFile);
    await mkdir(artifactsDir, { recursive: true });
    await mkdir(outside);
    for (const [dir, text] of [
      [artifactsDir, INSIDE],
      [outside, OUTSIDE],
    ] as const) {
      await writeFile(join(dir, "0.bash.log"), text);
      await writeFile(join(dir, "0-Report.md"), text);
    }
    const router = createInternalUrlRouter({
      artifacts: createArtifactStore({ sessionFile, logger: { warn: () => {} } }),
    });

    const swapper = startDirectorySwapper({ directory: artifactsDir, outside });
    const outcomes: Record<string, number> = {};
    let reads = 0;
    let swaps = 0;
    try {
      const until = Date.now() + MAX_RACE_MS;
      for (; reads < MAX_READS && Date.now() < until; reads++) {
        let outcome: string;
        try {
          outcome = (await router.read(reads % 2 === 0 ? "artifact://0" : "agent://0-Report")).text;
        } catch (err) {
          outcome = `${(err as { code?: string }).code}/${(err as { reason?: string }).reason}`;
        }
        outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
      }
    } finally {
      swaps = await swapper.stop();
      console.info(`${reads} reads under ${swaps} swaps:`, outcomes);
    }
    expect(outcomes[OUTSIDE] ?? 0).toBe(0);
    expect(outcomes[INSIDE] ?? 0).toBeGreaterThan(0);
    // It raced: the swapper ran, and some reads met the link (else the test proves nothing).
    expect(swaps).toBeGreaterThan(0);
    expect(outcomes["FORBIDDEN/ARTIFACTS_DIR_IS_LINK"] ?? 0).toBeGreaterThan(0);
  });
});
