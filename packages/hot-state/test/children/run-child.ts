import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

/** Starts a TypeScript child script against the packages' sources, as tests do. */
export function spawnChild(script: string, args: string[]): ChildProcess {
  const path = fileURLToPath(new URL(`./${script}`, import.meta.url));
  return spawn(process.execPath, ["--import", "tsx", "--conditions=@stowage/source", path, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** Runs a child to completion and returns its exit code and output. */
export function runChild(
  script: string,
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnChild(script, args);
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}
