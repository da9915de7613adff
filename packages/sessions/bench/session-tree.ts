import { mkdir, readFile, realpath } from "node:fs/promises";
import { join } from "node:path";
import { realisticSessionTree, writeSessionTree } from "../src/testing/index.js";

/** The capture and restore benches' Claude Code session, written below `base`. */
export interface BenchSessionTree {
  sessionId: string;
  /** The agent's working directory and config directory. */
  cwd: string;
  configDir: string;
  /** Each file's path below the project directory, and its bytes, in the tree's order. */
  paths: string[];
  contents: Buffer[];
  /** All of its files' bytes, one after another. */
  bytes: Buffer;
}

/**
 * About 12 MB: a 9.5 MB main transcript, two 0.9 MB subagents, tool results and a legacy agent,
 * a screenshot every 30 turns.
 */
export async function writeBenchSessionTree(base: string): Promise<BenchSessionTree> {
  await mkdir(join(base, "workspace"));
  const cwd = await realpath(join(base, "workspace"));
  const configDir = join(base, ".claude");
  const sessionId = "0f6c3a52-1b7e-4c1a-9d55-3c2b8f7e9a10";
  const files = realisticSessionTree({
    sessionId,
    cwd,
    mainBytes: 9_500_000,
    subagentBytes: 900_000,
    screenshotEvery: 30,
  });
  const location = await writeSessionTree({ configDir, cwd, sessionId, files });
  const paths = [...files.keys()];
  const contents = await Promise.all(paths.map((path) => readFile(join(location.projectDir, path))));
  return { sessionId, cwd, configDir, paths, contents, bytes: Buffer.concat(contents) };
}
