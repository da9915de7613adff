import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

/** Starts a TypeScript child script against the packages' sources, as tests do. */
export function spawnChild(script: string, args: string[]): ChildProcess {
  const path = fileURLToPath(new URL(`./${script}`, import.meta.url));
  return spawn(process.execPath, ["--import", "tsx", "--conditions=@stowage/source", path, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
}
