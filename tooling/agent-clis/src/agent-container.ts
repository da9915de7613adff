import { mkdir, realpath } from "node:fs/promises";
import { join } from "node:path";

/** One agent "container": a HOME to wipe and a working directory for the session. */
export interface AgentContainer {
  home: string;
  /** Its realpath: Claude Code keys the project directory by the realpath of the cwd. */
  cwd: string;
}

/**
 * Makes `<parent>/<name>-home` and `<parent>/<name>-cwd` (fresh: fails when they exist).
 * Deleting `home` is wiping the container; restoring means writing into a new one.
 */
export async function createAgentContainer(parent: string, name: string): Promise<AgentContainer> {
  const home = join(parent, `${name}-home`);
  const cwd = join(parent, `${name}-cwd`);
  await mkdir(home);
  await mkdir(cwd, { recursive: true });
  return { home, cwd: await realpath(cwd) };
}
