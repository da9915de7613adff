import { lstat, readdir, readFile, readlink } from "node:fs/promises";
import { join } from "node:path";
import { sha256Hex } from "@stowage/core";

/**
 * Every entry under `root` (recursively, without following symlinks) → a description of it:
 * `file <sha256> <mtime>`, `dir`, `link -> <target>`, or `special` (a FIFO, a device). Two equal snapshots mean nothing changed.
 */
export async function snapshotDirectory(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (directory: string, prefix: string) => {
    let names: string[];
    try {
      names = (await readdir(directory)).sort();
    } catch {
      return;
    }
    for (const name of names) {
      const path = join(directory, name);
      const key = prefix + name;
      const info = await lstat(path);
      if (info.isSymbolicLink()) out[key] = `link -> ${await readlink(path)}`;
      else if (info.isDirectory()) {
        out[key] = "dir";
        await walk(path, `${key}/`);
      } else if (info.isFile()) {
        out[key] = `file ${sha256Hex(await readFile(path))} ${Math.round(info.mtimeMs)}`;
      } else {
        // A FIFO or a device: reading it could block.
        out[key] = "special";
      }
    }
  };
  await walk(root, "");
  return out;
}
