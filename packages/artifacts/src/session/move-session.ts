import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { copyFile, link, lstat, mkdir, open, rename, rm, rmdir, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { errnoOf, fromSystemError, StowageError, throwIfAborted } from "@stowage/core";
import { ensureDirectory, fsyncDirectory, TEMP_FILE_PREFIX } from "@stowage/core/fs";
import { removeTreeAt } from "../layout/remove-tree.js";
import { artifactsDirFor } from "../layout/session-dir.js";
import { copyTree } from "./copy-tree.js";
import { checkDirectoryPath, isInside } from "./paths.js";

export interface MoveSessionOptions {
  signal?: AbortSignal;
}

export interface MoveSessionResult {
  sessionFile: string;
  artifactsDir: string;
  /** Source copies that could not be removed after a move across file systems (the move itself succeeded). */
  warnings: string[];
}

/** One completed step of a move: `undo` puts the source back, `commit` removes what is left of it. */
interface MoveStep {
  undo(): Promise<void>;
  commit(): Promise<void>;
}

const NOTHING = async () => {};
// link() errors of file systems without hard links: fall back to rename after checking the target.
const NO_HARD_LINKS = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS"]);

function tempNameBeside(path: string): string {
  return join(dirname(path), `${TEMP_FILE_PREFIX}move-${randomBytes(6).toString("hex")}`);
}

async function assertAbsent(path: string): Promise<void> {
  try {
    await lstat(path);
  } catch (err) {
    if (errnoOf(err) === "ENOENT") return;
    throw err;
  }
  throw Object.assign(new Error(`${path} already exists`), { code: "EEXIST" });
}

/** Moves a file without ever replacing one at `to`; across file systems it copies and keeps the source until `commit`. */
async function moveFile(from: string, to: string): Promise<MoveStep> {
  let linked = false;
  try {
    await link(from, to);
    linked = true;
  } catch (err) {
    const errno = errnoOf(err);
    if (NO_HARD_LINKS.has(errno ?? "")) {
      await assertAbsent(to);
      await rename(from, to);
      return { undo: () => rename(to, from), commit: NOTHING };
    }
    if (errno !== "EXDEV") throw err;
  }
  if (linked) {
    try {
      await unlink(from);
    } catch (err) {
      await unlink(to).catch(() => {});
      throw err;
    }
    return { undo: () => rename(to, from), commit: NOTHING };
  }
  const temp = tempNameBeside(to);
  try {
    await copyFile(from, temp, constants.COPYFILE_EXCL);
    const handle = await open(temp, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    await link(temp, to);
  } finally {
    await rm(temp, { force: true });
  }
  await fsyncDirectory(dirname(to));
  return { undo: () => rm(to, { force: true }), commit: () => unlink(from) };
}

/**
 * Moves a directory; across file systems it copies (fsynced) into a temp directory renamed into
 * place, and keeps the source until `commit`. rename() would silently replace an empty directory
 * at `to`, so `to` is first claimed by creating it (EEXIST when anything is there, empty or not);
 * the rename then replaces only this call's own empty claim.
 */
async function moveDirectory(from: string, to: string, signal: AbortSignal | undefined): Promise<MoveStep> {
  await mkdir(to);
  try {
    return await moveOntoClaim(from, to, signal);
  } catch (err) {
    // Removes the claim only while it is still empty: anything written into it stays.
    await rmdir(to).catch(() => {});
    throw err;
  }
}

async function moveOntoClaim(from: string, to: string, signal: AbortSignal | undefined): Promise<MoveStep> {
  try {
    await rename(from, to);
    return { undo: () => rename(to, from), commit: NOTHING };
  } catch (err) {
    if (errnoOf(err) !== "EXDEV") throw err;
  }
  const temp = tempNameBeside(to);
  try {
    await copyTree(from, temp, {
      link: false,
      fsync: true,
      onError: (error) => {
        throw error;
      },
      ...(signal ? { signal } : {}),
    });
    await rename(temp, to);
  } catch (err) {
    await removeTreeAt(temp).catch(() => {});
    throw err;
  }
  await fsyncDirectory(dirname(to));
  // Both trees are reachable by agents: removed without following a link swapped in meanwhile.
  return {
    undo: () => removeTreeAt(to),
    commit: async () => {
      await lstat(from); // a source gone already is an error (ENOENT), as rm without force made it
      await removeTreeAt(from);
    },
  };
}

/** Checks the session file is there; true when it has an artifacts directory to move. */
async function inspectSource(from: string, fromDir: string): Promise<boolean> {
  try {
    if (!(await lstat(from)).isFile()) {
      throw new StowageError("INVALID_INPUT", `session file ${from} is not a regular file`, {
        reason: "NOT_A_FILE",
      });
    }
    const info = await lstat(fromDir);
    if (info.isDirectory()) return true;
    throw new StowageError(
      "CONFLICT",
      `${fromDir} is not a directory, so it cannot be moved as the artifacts`,
      {
        reason: "NOT_A_DIRECTORY",
      },
    );
  } catch (err) {
    if (errnoOf(err) === "ENOENT" && (err as { path?: string }).path === fromDir) return false;
    throw fromSystemError(err, `move session ${from}`);
  }
}

function stepError(err: unknown, what: string): StowageError {
  const mapped = fromSystemError(err, what);
  if (errnoOf(err) === "ENOTEMPTY" || errnoOf(err) === "ENOTDIR" || errnoOf(err) === "EEXIST") {
    return new StowageError(
      "ALREADY_EXISTS",
      `${what}: the destination is already taken (${mapped.message})`,
      {
        cause: err,
        reason: "DESTINATION_EXISTS",
      },
    );
  }
  return mapped;
}

/**
 * Moves a session file and its artifacts directory into `newDir`, keeping their names. Nothing
 * at the destination is ever replaced. Across file systems (EXDEV) each is copied, fsynced and
 * renamed into place, and the sources are removed only once both copies are complete. When
 * moving the artifacts directory fails, the session file is moved back and the error is thrown
 * (`details.rolledBack`). Do not move a session while a tool is still writing into it.
 */
export async function moveSession(
  sessionFile: string,
  newDir: string,
  options: MoveSessionOptions = {},
): Promise<MoveSessionResult> {
  const fromDir = artifactsDirFor(sessionFile);
  const from = join(dirname(fromDir), basename(sessionFile));
  const targetDir = checkDirectoryPath(newDir, "moveSession destination directory");
  const to = join(targetDir, basename(from));
  const toDir = artifactsDirFor(to);
  if (isInside(fromDir, targetDir)) {
    throw new StowageError(
      "INVALID_INPUT",
      `cannot move a session into its own artifacts directory ${fromDir}`,
    );
  }
  const warnings: string[] = [];
  if (to === from) return { sessionFile: to, artifactsDir: toDir, warnings };
  throwIfAborted(options.signal, "move session");

  const hasArtifacts = await inspectSource(from, fromDir);

  let fileStep: MoveStep;
  try {
    await ensureDirectory(targetDir);
    fileStep = await moveFile(from, to);
  } catch (err) {
    throw stepError(err, `move session file ${from} to ${targetDir}`);
  }

  let dirStep: MoveStep | undefined;
  try {
    throwIfAborted(options.signal, "move session");
    if (hasArtifacts) dirStep = await moveDirectory(fromDir, toDir, options.signal);
  } catch (err) {
    const failure = stepError(err, `move artifacts directory ${fromDir} to ${targetDir}`);
    const rollbackError = await fileStep.undo().then(
      () => undefined,
      (undoErr: unknown) => fromSystemError(undoErr, "move the session file back"),
    );
    throw new StowageError(
      failure.code,
      rollbackError
        ? `${failure.message}; moving the session file back ALSO failed (${rollbackError.message}): it is now at ${to}`
        : `${failure.message}; the session file was moved back to ${from}`,
      {
        cause: err,
        ...(failure.reason ? { reason: failure.reason } : {}),
        details: { rolledBack: rollbackError === undefined, sessionFile: rollbackError ? to : from },
      },
    );
  }

  for (const [step, what] of [
    [fileStep, from],
    [dirStep, fromDir],
  ] as const) {
    await step?.commit().catch((err: unknown) => {
      warnings.push(
        `moved, but the source ${what} could not be removed: ${fromSystemError(err, "remove").message}`,
      );
    });
  }
  return { sessionFile: to, artifactsDir: toDir, warnings };
}
