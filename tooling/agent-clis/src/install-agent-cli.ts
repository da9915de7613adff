import { existsSync } from "node:fs";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { runningInCi } from "@stowage/core/testing";
import lockfile from "proper-lockfile";
import { AGENT_CLI_PINS, type AgentCliName } from "./agent-cli-pins.js";
import { agentCliCacheRoot } from "./cache-directory.js";
import { runProcess, withoutPackageManagerEnv } from "./run-process.js";

/** An installed CLI: start it as `command ...args ...yourArgs`. */
export interface ReadyAgentCli {
  ready: true;
  name: AgentCliName;
  version: string;
  /** The install prefix, `<cache>/<package>@<version>`. */
  dir: string;
  /** The executable: the native binary, or `node` for a Node entry point. */
  command: string;
  /** Arguments before the CLI's own (the script path for a Node entry point). */
  args: readonly string[];
}

/** A CLI that could not be installed here (outside CI only: in CI this throws). */
export interface MissingAgentCli {
  ready: false;
  name: AgentCliName;
  reason: string;
}

export type AgentCli = ReadyAgentCli | MissingAgentCli;

export interface InstallAgentCliOptions {
  /** Bound on the `npm install`. Default 300 000 ms. */
  timeoutMs?: number;
  /** The cache root. Default {@link agentCliCacheRoot}. */
  cacheRoot?: string;
}

/** Written last into the install directory: its presence means the install is complete. */
export const INSTALL_MARKER = ".stowage-agent-cli-complete";

const DEFAULT_INSTALL_TIMEOUT_MS = 300_000;

/** How long a waiting process retries the install lock: longer than one install may take. */
const LOCK_RETRY = { retries: 700, factor: 1, minTimeout: 500, maxTimeout: 500 };

/**
 * Installs the pinned version of an agent CLI with npm into
 * `<cache>/<package>@<version>/` (never as a dependency of a package: the binaries are
 * 350–400 MB), or reuses it when a complete install is there. Several test files may ask at
 * once: a lock on the directory lets one install while the others wait, then reuse it.
 *
 * When npm, the network or the platform fails, the suite should skip: outside CI this prints
 * the reason and returns `{ ready: false, reason }`; with `CI` set it throws, because CI must run
 * the real clients.
 */
export async function installAgentCli(
  name: AgentCliName,
  options: InstallAgentCliOptions = {},
): Promise<AgentCli> {
  const result = await tryInstall(name, options);
  if (result.ready) return result;
  if (runningInCi()) throw new Error(`agent CLI ${name}: ${result.reason}; in CI the real CLIs must run`);
  console.warn(
    `[stowage] ${name} end-to-end tests skipped: ${result.reason}. To run them: ` +
      "`pnpm --filter @stowage/agent-clis run install-clis` (npm registry access; behind a TLS proxy, NODE_EXTRA_CA_CERTS or npm's cafile)",
  );
  return result;
}

async function tryInstall(name: AgentCliName, options: InstallAgentCliOptions): Promise<AgentCli> {
  const pin = AGENT_CLI_PINS[name];
  if (process.platform !== "linux" || process.arch !== "x64") {
    return {
      ready: false,
      name,
      reason: `only linux-x64 is pinned, this is ${process.platform}-${process.arch}`,
    };
  }
  const dir = join(
    options.cacheRoot ?? agentCliCacheRoot(),
    `${pin.packageName.replace("/", "+")}@${pin.version}`,
  );
  const ready: ReadyAgentCli = {
    ready: true,
    name,
    version: pin.version,
    dir,
    command: pin.node ? process.execPath : join(dir, pin.command),
    args: pin.node ? [join(dir, pin.command)] : [],
  };
  if (await isComplete(dir, join(dir, pin.command))) return ready;

  let release: () => Promise<void>;
  try {
    await mkdir(dir, { recursive: true });
    release = await lockfile.lock(dir, { retries: LOCK_RETRY, lockfilePath: `${dir}.lock` });
  } catch (error) {
    return { ready: false, name, reason: `could not create and lock ${dir}: ${(error as Error).message}` };
  }
  try {
    // Another process may have finished the install while this one waited for the lock.
    if (await isComplete(dir, join(dir, pin.command))) return ready;
    await rm(join(dir, INSTALL_MARKER), { force: true });
    const spec = `${pin.packageName}@${pin.version}`;
    const env = withoutPackageManagerEnv(process.env);
    // With --prefix, npm reads its global npmrc from <prefix>/etc: name the machine's own, where
    // a registry, proxy or CA file (cafile) is set, so the install sees what `npm install` sees.
    const globalConfig = await npmGlobalConfig(env);
    const npm = await runProcess(
      "npm",
      [
        "install",
        "--no-save",
        "--no-audit",
        "--no-fund",
        "--no-package-lock",
        ...(globalConfig ? ["--globalconfig", globalConfig] : []),
        "--prefix",
        dir,
        spec,
      ],
      { env, timeoutMs: options.timeoutMs ?? DEFAULT_INSTALL_TIMEOUT_MS },
    ).catch((error: Error) => ({ code: null, stdout: "", stderr: error.message, timedOut: false }));
    if (npm.timedOut) return { ready: false, name, reason: `npm install ${spec} timed out` };
    if (npm.code !== 0) {
      return {
        ready: false,
        name,
        reason: `npm install ${spec} failed (${npm.code}): ${npm.stderr.trim().slice(-500)}`,
      };
    }
    if (!existsSync(join(dir, pin.command))) {
      return { ready: false, name, reason: `npm installed ${spec} but ${pin.command} is missing` };
    }
    await writeFile(join(dir, INSTALL_MARKER), `${JSON.stringify({ package: spec })}\n`);
    return ready;
  } finally {
    await release();
  }
}

/** The global npmrc npm reads on this machine, or undefined when npm cannot say. */
async function npmGlobalConfig(env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const result = await runProcess("npm", ["config", "get", "globalconfig"], { env, timeoutMs: 30_000 }).catch(
    () => undefined,
  );
  const path = result?.code === 0 ? result.stdout.trim() : "";
  return path && existsSync(path) ? path : undefined;
}

async function isComplete(dir: string, executable: string): Promise<boolean> {
  try {
    await readFile(join(dir, INSTALL_MARKER));
    return existsSync(executable);
  } catch {
    return false;
  }
}
