import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describeValue, type Logger, StowageError } from "@stowage/core";
import { removeTreeAt } from "../layout/remove-tree.js";
import { createInternalUrlRouter, type InternalUrlRouter } from "../urls/router.js";
import { type ArtifactStore, createArtifactStore } from "./artifact-store.js";

/** Name prefix of the temporary artifacts directory of a run without a session file. */
export const TEMPORARY_ARTIFACTS_PREFIX = "stowage-artifacts-";

/** Options of {@link openRunArtifacts}. */
export interface RunArtifactsOptions {
  /**
   * The run's session file; without one (`undefined` or `null`, as a run without a session file
   * reports it), the artifacts go to a new temporary directory.
   */
  sessionFile?: string | null | undefined;
  /** Where the temporary directory is made. Default: the system's (`os.tmpdir()`). */
  tempRoot?: string;
  /** fsync artifacts (see `createArtifactStore`). */
  fsync?: boolean;
  /** Receives the store's warnings. */
  logger?: Logger;
}

/** The artifacts of one run, and where they are. */
export interface RunArtifacts {
  artifacts: ArtifactStore;
  /** Reads `artifact://` and `agent://` URLs against `artifacts`. */
  router: InternalUrlRouter;
  /** The artifacts directory (absolute): report it to the caller, it is where the outputs are. */
  dir: string;
  /** True when the run had no session file and `dir` is a temporary directory of this run. */
  temporary: boolean;
  /** Removes a temporary directory and everything in it; does nothing for a session's directory. */
  dispose(): Promise<void>;
  /** `dispose()`, for `await using run = await openRunArtifacts(…)`. */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * The artifacts of a run: its session's directory when it has a session file, else (as the task
 * tool of a run without one does) a new private temporary directory (`<tmp>/stowage-artifacts-…`,
 * mode 0700), so subagent outputs are still written and `agent://` reads still work. The result
 * says which (`temporary`, `dir`); the caller reports the directory and calls `dispose()` once
 * nothing will read the outputs any more.
 */
export async function openRunArtifacts(options: RunArtifactsOptions = {}): Promise<RunArtifacts> {
  const { tempRoot, fsync, logger } = options ?? {};
  const sessionFile = options?.sessionFile ?? undefined;
  const storeOptions = { ...(fsync === undefined ? {} : { fsync }), ...(logger ? { logger } : {}) };
  const runOf = (artifacts: ArtifactStore, dispose: () => Promise<void>): RunArtifacts => ({
    artifacts,
    router: createInternalUrlRouter({ artifacts }),
    dir: artifacts.dir,
    temporary: sessionFile === undefined,
    dispose,
    [Symbol.asyncDispose]: dispose,
  });
  if (sessionFile !== undefined) {
    return runOf(createArtifactStore({ sessionFile, ...storeOptions }), async () => {});
  }
  if (
    tempRoot !== undefined &&
    (typeof tempRoot !== "string" || tempRoot === "" || tempRoot.includes("\u0000"))
  ) {
    throw new StowageError(
      "INVALID_INPUT",
      `tempRoot must be a non-empty path without NUL, got ${describeValue(tempRoot)}`,
    );
  }
  const dir = await mkdtemp(join(tempRoot ?? tmpdir(), TEMPORARY_ARTIFACTS_PREFIX));
  // The run's agents write into it: removed without following a link they may have swapped in.
  return runOf(createArtifactStore({ dir, ...storeOptions }), () => removeTreeAt(dir));
}
