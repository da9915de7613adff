import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import { compiledScript } from "./compiled-sources.js";

/**
 * tsx's loader, resolved from the repository root where tsx is a devDependency, so that a child
 * starts the same way whichever package's tests spawn it (for scripts outside the repository).
 */
const TSX_LOADER = pathToFileURL(
  createRequire(new URL("../../../package.json", import.meta.url)).resolve("tsx"),
).href;

/** How a child process is started. */
export interface ChildOptions {
  /** Run the child as this user, e.g. `nobody` for a writer without permission. */
  uid?: number;
  /** Run the child with this group. */
  gid?: number;
  /** The child's environment; the parent's when omitted. */
  env?: NodeJS.ProcessEnv;
  /** The child's working directory; the parent's when omitted. */
  cwd?: string;
  /** `"ignore"` where nobody reads the output, so that a full pipe never stalls the child. Default `"pipe"`. */
  stdout?: "pipe" | "ignore";
  /** `"ignore"` where nobody reads the output, so that a full pipe never stalls the child. Default `"pipe"`. */
  stderr?: "pipe" | "ignore";
}

/** How a child ended and what it printed (`""` for an ignored stream). */
export interface ChildResult {
  /** The exit code; `null` when a signal ended the child. */
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * How Node starts `script` (an absolute path) against the packages' sources: the script's
 * compiled copy (compiled-sources.ts) when it is a file of the repository, else through tsx.
 */
export function nodeArgsFor(script: string): string[] {
  const compiled = compiledScript(script);
  return compiled === undefined
    ? ["--import", TSX_LOADER, "--conditions=@stowage/source", script]
    : ["--conditions=@stowage/source", compiled];
}

/**
 * Starts a TypeScript script against the packages' sources (`node --conditions=@stowage/source
 * <script compiled> ...args`, see {@link nodeArgsFor}) with stdin closed. For tests that watch or
 * kill the child; {@link runChild} waits for it instead.
 *
 * @param script the script: a file URL (`new URL("./children/x.ts", import.meta.url)`) or an absolute path
 */
export function spawnChild(
  script: URL | string,
  args: readonly string[],
  options: ChildOptions = {},
): ChildProcess {
  const { stdout = "pipe", stderr = "pipe", ...rest } = options;
  const path = typeof script === "string" ? script : fileURLToPath(script);
  return spawn(process.execPath, [...nodeArgsFor(path), ...args], {
    stdio: ["ignore", stdout, stderr],
    ...rest,
  });
}

/** Runs a child (see {@link spawnChild}) to completion; resolves with its exit code and output. */
export function runChild(
  script: URL | string,
  args: readonly string[],
  options: ChildOptions = {},
): Promise<ChildResult> {
  const child = spawnChild(script, args, options);
  let stdout = "";
  let stderr = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}
