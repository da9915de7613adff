import { StowageError } from "../errors.js";

/**
 * vitest, the optional peer dependency that every `…/testing` entry runs on. Loaded this way (not
 * imported statically) so that without it, importing the entry fails with UNAVAILABLE, reason
 * `PEER_MISSING`, saying what to install, instead of a bare ERR_MODULE_NOT_FOUND.
 *
 * @param entry the entry that needs it, named in the error, e.g. `@stowage/core/testing`
 */
export async function loadVitest(entry: string): Promise<typeof import("vitest")> {
  try {
    return await import("vitest");
  } catch (cause) {
    if ((cause as { code?: unknown })?.code !== "ERR_MODULE_NOT_FOUND") throw cause;
    throw new StowageError(
      "UNAVAILABLE",
      `${entry} runs on vitest, an optional peer dependency that is not installed: npm install -D vitest`,
      { cause, reason: "PEER_MISSING" },
    );
  }
}
