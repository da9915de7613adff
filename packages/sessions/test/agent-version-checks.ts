import { execFile } from "node:child_process";
import type { AgentCli } from "@stowage/agent-clis";
import { expect } from "vitest";
import { agentVersionFromCliOutput, type CapturedSession } from "../src/index.js";

// Version detection with the real CLIs, checked inside each CLI's round-trip tests (a real run's
// capture is already there; a suite of its own ran every CLI again for it): the capture records
// the version the session itself writes, which is the installed CLI's `--version`; restored with
// that CLI it passes with no mismatch, and one major version apart is refused.

/** What `<cli> --version` prints, run as the tests start the CLI, bounded. */
export function versionOutput(cli: AgentCli, env: NodeJS.ProcessEnv): Promise<string> {
  if (!cli.ready) throw new Error(cli.reason);
  return new Promise((resolve, reject) => {
    execFile(cli.command, [...cli.args, "--version"], { env, timeout: 60_000 }, (err, stdout) =>
      err ? reject(err) : resolve(stdout),
    );
  });
}

/** The version `--version` printed is the pinned one, and the one the session recorded; that output. */
export async function expectRecordedVersion(
  cli: AgentCli,
  captured: CapturedSession,
  env: NodeJS.ProcessEnv,
): Promise<string> {
  if (!cli.ready) throw new Error(cli.reason);
  const output = await versionOutput(cli, env);
  expect(agentVersionFromCliOutput(output)?.text, output).toBe(cli.version);
  expect(captured.manifest.agentVersion).toBe(cli.version);
  return output;
}

/** The next major version: what the version table refuses for every agent. */
export const nextMajor = (version: string) => `${Number(version.split(".")[0]) + 1}.0.0`;
