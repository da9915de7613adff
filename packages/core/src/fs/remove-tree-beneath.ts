import { readdir, rmdir, unlink } from "node:fs/promises";
import { StowageError } from "../errors.js";
import { errnoOf, fromSystemError } from "../system-errors.js";
import { assertSegment, type OpenedDirectory, openDirectoryBeneath } from "./open-beneath.js";

/** Tries at one name before giving up: each lost race means someone is swapping it right now. */
const ATTEMPTS = 8;

/**
 * Removes `name` inside `parent`, whatever it is, without ever following a link: a file or a link
 * is unlinked as itself; a directory is opened beneath `parent` (see `openDirectoryBeneath`),
 * emptied through that descriptor, one name at a time, and removed. A path-based recursive
 * removal (`rm -r`, Node's `fs.rm`) lists a directory by its path and removes its entries by
 * path: a directory swapped for a link between its check and its listing makes it delete what
 * the link points at. Here a directory swapped for a link after it was opened is emptied as the
 * directory it was, and the link is unlinked as a link. Missing is fine (nothing to do).
 */
export async function removeTreeBeneath(parent: OpenedDirectory, name: string): Promise<void> {
  assertSegment(name);
  const path = `${parent.path}/${name}`;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    try {
      // unlink(2) never follows a link at its last component; a directory fails (EISDIR, EPERM).
      await unlink(path);
      return;
    } catch (err) {
      const errno = errnoOf(err);
      if (errno === "ENOENT") return;
      if (errno !== "EISDIR" && errno !== "EPERM") throw fromSystemError(err, `remove ${name}`);
    }
    let directory: OpenedDirectory | null;
    try {
      directory = openDirectoryBeneath(parent, [name], { refuseNonDirectories: true });
    } catch (err) {
      // Swapped for a link or a file since the unlink: unlink that, next time round.
      if (StowageError.is(err, "FORBIDDEN")) continue;
      throw err;
    }
    if (!directory) return;
    try {
      for (const entry of await readdir(directory.path)) await removeTreeBeneath(directory, entry);
    } finally {
      directory.close();
    }
    try {
      await rmdir(path);
      return;
    } catch (err) {
      const errno = errnoOf(err);
      if (errno === "ENOENT") return;
      // ENOTDIR: a link took its name (rmdir never follows one); ENOTEMPTY: something was added.
      if (errno !== "ENOTDIR" && errno !== "ENOTEMPTY" && errno !== "EEXIST") {
        throw fromSystemError(err, `remove ${name}`);
      }
    }
  }
  throw new StowageError("UNAVAILABLE", `${name} kept changing while it was being removed; try again`, {
    reason: "TREE_CHANGING",
  });
}
