import { main } from "./main.js";
import { compileWasmForOneRun } from "./wasm-tier.js";

/**
 * Runs `stowage` with this process's arguments, streams and environment, every relative path a
 * user gives resolved against `cwd`, and sets the exit status.
 */
export async function runStowageProcess(cwd: string): Promise<void> {
  const argv = process.argv.slice(2);
  compileWasmForOneRun(argv);
  process.exitCode = await main(argv, {
    out: (line) => process.stdout.write(`${line}\n`),
    note: (line) => process.stderr.write(`${line}\n`),
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd,
  });
}
