import { open } from "node:fs/promises";
import { errnoOf, fromSystemError } from "@stowage/core";
import { type OpenedDirectory, openDirectoryBeneath } from "@stowage/core/fs";
import type { DirectoryAccess } from "../layout/directory-access.js";
import { readDirectoryNames } from "../layout/listing.js";

/**
 * Subdirectory of an artifacts directory holding one empty file per id ever handed out. An id is
 * taken by creating its claim exclusively (`O_CREAT|O_EXCL`), which the kernel arbitrates
 * between processes; claims are never removed, so an id stays taken after its file is renamed.
 */
export const CLAIMS_DIR_NAME = ".claims";

/**
 * Exclusive-create claims under `<dir>/.claims/`, shared by every process using the directory.
 * The claims directory is opened anew, without following a link, for every claim: a link planted
 * there (before or after the first claim) is refused (FORBIDDEN, reason `CLAIMS_NOT_A_DIRECTORY`).
 */
export class ClaimRegistry {
  readonly #access: DirectoryAccess;

  constructor(access: DirectoryAccess) {
    this.#access = access;
  }

  #openClaims(directory: OpenedDirectory, create: boolean) {
    return openDirectoryBeneath(directory, [CLAIMS_DIR_NAME], {
      create,
      refusedReason: "CLAIMS_NOT_A_DIRECTORY",
      refuseNonDirectories: true,
    });
  }

  /** True when this call took `name`; false when another caller (any process) holds it. */
  async claim(name: string): Promise<boolean> {
    const taken = await this.#access.use(true, async (_path, directory) => {
      const claims = this.#openClaims(directory, true)!;
      try {
        const handle = await open(`${claims.path}/${name}`, "wx", 0o644);
        await handle.close();
        return true;
      } catch (err) {
        if (errnoOf(err) === "EEXIST") return false;
        throw fromSystemError(err, `claim ${name}`);
      } finally {
        claims.close();
      }
    });
    return taken === true;
  }

  /** Names of the claims taken so far (empty when there are none). */
  async list(): Promise<string[]> {
    const names = await this.#access.use(false, async (_path, directory) => {
      const claims = this.#openClaims(directory, false);
      if (!claims) return [];
      try {
        return (await readDirectoryNames(claims.path, "list artifact id claims")) ?? [];
      } finally {
        claims.close();
      }
    });
    return names ?? [];
  }
}
