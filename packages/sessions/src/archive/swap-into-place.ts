import { lstat, rename } from "node:fs/promises";
import { join } from "node:path";
import { describeValue, errnoOf, StowageError } from "@stowage/core";

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch (err) {
    if (errnoOf(err) === "ENOENT") return false;
    throw err;
  }
}

interface Step {
  name: string;
  movedAside: boolean;
  installed: boolean;
}

/**
 * Moves each staged top-level entry (`stagedDir/<name>`) into `targetDir`, first moving any
 * existing entry of that name into `asideDir`. Every move is a rename within one file system.
 * If a move fails, the moves already made are undone in reverse, so the target directory ends
 * as it began; the error is rethrown. Returns the names that replaced an existing entry.
 */
export async function swapIntoPlace(options: {
  targetDir: string;
  stagedDir: string;
  asideDir: string;
  names: readonly string[];
  overwrite: boolean;
}): Promise<string[]> {
  const { targetDir, stagedDir, asideDir, names, overwrite } = options;
  const present = new Set<string>();
  for (const name of names) if (await exists(join(targetDir, name))) present.add(name);
  if (!overwrite && present.size > 0) {
    throw new StowageError(
      "CONFLICT",
      `restore would replace ${[...present].map((name) => describeValue(name)).join(", ")} in ${targetDir}; pass overwrite: true to replace`,
      { details: { existing: [...present] } },
    );
  }
  const steps: Step[] = [];
  try {
    for (const name of names) {
      const step: Step = { name, movedAside: false, installed: false };
      steps.push(step);
      if (present.has(name)) {
        await rename(join(targetDir, name), join(asideDir, name));
        step.movedAside = true;
      }
      await rename(join(stagedDir, name), join(targetDir, name));
      step.installed = true;
    }
  } catch (err) {
    for (const step of steps.reverse()) {
      const target = join(targetDir, step.name);
      if (step.installed) await rename(target, join(stagedDir, step.name)).catch(() => {});
      if (step.movedAside) await rename(join(asideDir, step.name), target).catch(() => {});
    }
    throw err;
  }
  return names.filter((name) => present.has(name));
}
