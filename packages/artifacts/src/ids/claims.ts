import { lstat, open } from "node:fs/promises";
import { join } from "node:path";
import { errnoOf, fromSystemError, StowageError } from "@stowage/core";
import { ensureDirectory } from "@stowage/core/fs";
import { readDirectoryNames } from "../layout/listing.js";

/**
 * Subdirectory of an artifacts directory holding one empty file per id ever handed out. An id is
 * taken by creating its claim exclusively (`O_CREAT|O_EXCL`), which the kernel arbitrates
 * between processes; claims are never removed, so an id stays taken after its file is renamed.
 */
export const CLAIMS_DIR_NAME = ".claims";

/** Exclusive-create claims under `<dir>/.claims/`, shared by every process using the directory. */
export class ClaimRegistry {
  readonly #claimsDir: string;
  #ready: Promise<void> | undefined;

  constructor(dir: string) {
    this.#claimsDir = join(dir, CLAIMS_DIR_NAME);
  }

  /** Creates the claims directory (and the artifacts directory) once; refuses a symlink planted there. */
  async #ensureReady(): Promise<void> {
    try {
      const info = await lstat(this.#claimsDir);
      if (info.isDirectory()) return;
      throw new StowageError(
        "FORBIDDEN",
        `${this.#claimsDir} is not a directory (a symbolic link or file is there); refusing to create id claims through it`,
        { reason: "CLAIMS_NOT_A_DIRECTORY" },
      );
    } catch (err) {
      if (errnoOf(err) !== "ENOENT") throw fromSystemError(err, "artifact id claims");
    }
    try {
      await ensureDirectory(this.#claimsDir);
    } catch (err) {
      throw fromSystemError(err, "create the artifacts directory");
    }
  }

  /** True when this call took `name`; false when another caller (any process) holds it. */
  async claim(name: string): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      this.#ready ??= this.#ensureReady().catch((err: unknown) => {
        this.#ready = undefined;
        throw err;
      });
      await this.#ready;
      try {
        const handle = await open(join(this.#claimsDir, name), "wx", 0o644);
        await handle.close();
        return true;
      } catch (err) {
        if (errnoOf(err) === "EEXIST") return false;
        // The directory went away under us (removed or moved): create it again, once.
        if (errnoOf(err) === "ENOENT" && attempt === 0) {
          this.#ready = undefined;
          continue;
        }
        throw fromSystemError(err, `claim ${name}`);
      }
    }
  }

  /** Names of the claims taken so far (empty when there are none). */
  async list(): Promise<string[]> {
    return (await readDirectoryNames(this.#claimsDir, "list artifact id claims")) ?? [];
  }
}
