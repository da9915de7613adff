/**
 * `pnpm --filter @stowage/agent-clis run install-clis`: installs every pinned CLI into the cache
 * before the tests (CI runs it once; a warm cache makes it a no-op) and prints how long each took.
 * Outside CI a CLI that cannot be installed is reported and skipped; in CI it fails the run.
 */
import { AGENT_CLI_PINS, type AgentCliName } from "./agent-cli-pins.js";
import { agentCliCacheRoot } from "./cache-directory.js";
import { installAgentCli } from "./install-agent-cli.js";

console.log(`agent CLIs cache: ${agentCliCacheRoot()}`);
for (const name of Object.keys(AGENT_CLI_PINS) as AgentCliName[]) {
  const started = performance.now();
  const cli = await installAgentCli(name);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(
    cli.ready ? `${name} ${cli.version}: ready in ${seconds} s` : `${name}: not installed (${cli.reason})`,
  );
}
