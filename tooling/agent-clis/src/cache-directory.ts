import { userInfo } from "node:os";
import { join } from "node:path";

/**
 * The root of the CLI cache: `STOWAGE_AGENT_CLIS_CACHE`, else `~/.cache/stowage-agent-clis` of
 * the user running the tests. The home comes from the user database, not `HOME`, because the
 * tests give every agent run its own `HOME` and the cache must not follow it.
 */
export function agentCliCacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env.STOWAGE_AGENT_CLIS_CACHE;
  if (configured) return configured;
  return join(userInfo().homedir, ".cache", "stowage-agent-clis");
}
