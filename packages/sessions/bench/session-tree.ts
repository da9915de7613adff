import { mkdir, readFile, realpath } from "node:fs/promises";
import { join } from "node:path";
import { realisticSessionTree, writeSessionTree } from "../src/testing/index.js";

/** The capture and restore benches' Claude Code session, written below `base`. */
export interface BenchSessionTree {
  sessionId: string;
  /** The agent's working directory and config directory. */
  cwd: string;
  configDir: string;
  /** Where Claude Code keeps the session's files: `<configDir>/projects/<key>`. */
  projectDir: string;
  /** Each file's path below the project directory, and its bytes, in the tree's order. */
  paths: string[];
  contents: Buffer[];
  /** All of its files' bytes, one after another. */
  bytes: Buffer;
}

/** The capture and restore benches' main transcript: 9.5 MB (with the rest, about 12 MB). */
const BENCH_MAIN_BYTES = 9_500_000;

/**
 * About 12 MB: a 9.5 MB main transcript, two 0.9 MB subagents, tool results and a legacy agent,
 * a screenshot every 30 turns. `mainBytes` scales it (the subagents stay at the same share).
 */
export async function writeBenchSessionTree(
  base: string,
  mainBytes = BENCH_MAIN_BYTES,
): Promise<BenchSessionTree> {
  await mkdir(join(base, "workspace"));
  const cwd = await realpath(join(base, "workspace"));
  const configDir = join(base, ".claude");
  const sessionId = "0f6c3a52-1b7e-4c1a-9d55-3c2b8f7e9a10";
  const files = realisticSessionTree({
    sessionId,
    cwd,
    mainBytes,
    subagentBytes: Math.round((mainBytes * 900_000) / BENCH_MAIN_BYTES),
    screenshotEvery: 30,
  });
  const location = await writeSessionTree({ configDir, cwd, sessionId, files });
  const paths = [...files.keys()];
  const contents = await Promise.all(paths.map((path) => readFile(join(location.projectDir, path))));
  return {
    sessionId,
    cwd,
    configDir,
    projectDir: location.projectDir,
    paths,
    contents,
    bytes: Buffer.concat(contents),
  };
}
