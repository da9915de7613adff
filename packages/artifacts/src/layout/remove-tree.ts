import { basename, dirname } from "node:path";
import { openDirectoryBeneath, removeTreeBeneath } from "@stowage/core/fs";

/**
 * Removes the tree at `path` with what it holds, never following a link inside it (core's
 * `removeTreeBeneath`); missing is fine. Its parent is the caller's (it may be a link) and is
 * held open for the removal: an agent can swap any directory of the tree for a link while it
 * is removed, and a path-based `rm -r` would then delete what the link points at.
 */
export async function removeTreeAt(path: string): Promise<void> {
  const parent = openDirectoryBeneath(dirname(path), []);
  if (!parent) return;
  try {
    await removeTreeBeneath(parent, basename(path));
  } finally {
    parent.close();
  }
}
