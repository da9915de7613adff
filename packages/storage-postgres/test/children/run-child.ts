import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

/** Runs a TypeScript child script against the packages' sources; resolves with its exit code and output. */
export function runChild(script: string, args: string[]): Promise<{ code: number | null; stderr: string }> {
  const path = fileURLToPath(new URL(`./${script}`, import.meta.url));
  const child = spawn(process.execPath, ["--import", "tsx", "--conditions=@stowage/source", path, ...args], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stderr }));
  });
}
