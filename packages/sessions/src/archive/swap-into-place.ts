import { link, lstat, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import { describeValue, errnoOf, StowageError } from "@stowage/core";
import { type OpenedDirectory, openDirectoryBeneath } from "@stowage/core/fs";

/** What a swap moved for one file, so that a failure can undo it. */
interface Step {
  path: string;
  /** The directory the file went into, held open until the swap is over. */
  parent: string;
  name: string;
  /** Where the file it replaced waits, when there was one. */
  aside?: string;
  installed: boolean;
}

export interface SwapIntoPlaceOptions {
  /** The directory the files go into, opened beneath its root (see `openDirectoryBeneath`). */
  target: OpenedDirectory;
  /**
   * Holds the file of `paths[i]` under the name `i`: flat, so that no directory of it can be
   * swapped for a link (give it as a directory held open, see `OpenedDirectory.path`).
   */
  stagedDir: string;
  /** Where replaced files wait until the swap is over (held open too); the caller removes it afterwards. */
  asideDir: string;
  /** The files to install, relative to `target`, `/`-separated. */
  paths: readonly string[];
  overwrite: boolean;
  /**
   * Called for each path that already exists in `target` (with a path that reaches it without
   * following a link at its last component), before anything moves; throws to refuse the swap.
   */
  checkReplaceable?: (path: string, existing: string) => Promise<void>;
  /** Called with the lexical path of each directory the swap creates, top first. */
  onCreate?: (lexicalPath: string) => void;
}

/**
 * Puts the staged file at `destination`, which was found absent (or was just moved aside):
 * linked, not renamed, so that a file another process put there since (another session's
 * restore writing the same legacy agent file) is never replaced but refused.
 */
async function installNoReplace(staged: string, destination: string, path: string): Promise<void> {
  try {
    await link(staged, destination);
  } catch (err) {
    if (errnoOf(err) !== "EEXIST") throw err;
    throw new StowageError(
      "CONFLICT",
      `restore found ${describeValue(path)} created by someone else while it was restoring; nothing was replaced`,
      { reason: "FILE_APPEARED", details: { path }, cause: err },
    );
  }
  await unlink(staged);
}

function split(path: string): { segments: string[]; name: string } {
  const segments = path.split("/");
  const name = segments.pop()!;
  return { segments, name };
}

/** The directories above the files, each opened once (without following a link) and kept open. */
class Parents {
  readonly #opened = new Map<string, OpenedDirectory | null>();
  constructor(
    readonly target: OpenedDirectory,
    readonly create: boolean,
    readonly onCreate?: (lexicalPath: string) => void,
  ) {}

  open(segments: readonly string[]): OpenedDirectory | null {
    if (segments.length === 0) return this.target;
    const key = segments.join("/");
    if (!this.#opened.has(key)) {
      this.#opened.set(
        key,
        openDirectoryBeneath(this.target, segments, {
          create: this.create,
          ...(this.onCreate ? { onCreate: this.onCreate } : {}),
        }),
      );
    }
    return this.#opened.get(key)!;
  }

  close(): void {
    for (const directory of this.#opened.values()) directory?.close();
  }
}

/**
 * Installs each staged file (`stagedDir/<i>` for `paths[i]`) at its path below `target`, file by file:
 * directories that are missing are created, a file already there is moved into `asideDir` (with
 * `overwrite`; else CONFLICT before anything moves), and nothing else in `target` is touched, so
 * files of an existing copy that the staged set does not hold stay. A directory where a file goes
 * is CONFLICT (reason `NOT_A_FILE`): it is never replaced. No link below `target` is followed
 * (FORBIDDEN, `SYMLINK_REFUSED`); a link where a file goes is replaced as that file. Every move is
 * a rename within one file system; if one fails, those already made are undone in reverse and
 * the error is rethrown (the directories created stay for the caller to remove while empty).
 * Returns the paths that replaced an existing file.
 */
export async function swapIntoPlace(options: SwapIntoPlaceOptions): Promise<string[]> {
  const { target, stagedDir, asideDir, paths, overwrite } = options;
  const present = new Set<string>();
  const probe = new Parents(target, false);
  try {
    for (const path of paths) {
      const { segments, name } = split(path);
      const parent = probe.open(segments);
      if (!parent) continue;
      const existing = `${parent.path}/${name}`;
      let isDirectory: boolean;
      try {
        isDirectory = (await lstat(existing)).isDirectory();
      } catch (err) {
        if (errnoOf(err) === "ENOENT") continue;
        throw err;
      }
      if (isDirectory) {
        throw new StowageError(
          "CONFLICT",
          `restore would put a file at ${describeValue(path)} in ${target.lexicalPath}, where there is a directory; a directory is never replaced`,
          { reason: "NOT_A_FILE", details: { path } },
        );
      }
      await options.checkReplaceable?.(path, existing);
      present.add(path);
    }
  } finally {
    probe.close();
  }
  if (!overwrite && present.size > 0) {
    throw new StowageError(
      "CONFLICT",
      `restore would replace ${[...present].map((path) => describeValue(path)).join(", ")} in ${target.lexicalPath}; pass overwrite: true to replace`,
      { details: { existing: [...present] } },
    );
  }
  const parents = new Parents(target, true, options.onCreate);
  const steps: Step[] = [];
  try {
    for (const [index, path] of paths.entries()) {
      const { segments, name } = split(path);
      const step: Step = { path, parent: parents.open(segments)!.path, name, installed: false };
      steps.push(step);
      const destination = `${step.parent}/${name}`;
      if (present.has(path)) {
        const aside = join(asideDir, String(index));
        await rename(destination, aside);
        step.aside = aside;
      }
      await installNoReplace(join(stagedDir, String(index)), destination, path);
      step.installed = true;
    }
  } catch (err) {
    for (const [index, step] of [...steps.entries()].reverse()) {
      const destination = `${step.parent}/${step.name}`;
      if (step.installed) await rename(destination, join(stagedDir, String(index))).catch(() => {});
      if (step.aside) await rename(step.aside, destination).catch(() => {});
    }
    throw err;
  } finally {
    parents.close();
  }
  return paths.filter((path) => present.has(path));
}
