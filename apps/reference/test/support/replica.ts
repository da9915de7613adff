import type { ChildProcess } from "node:child_process";
import { spawnChild } from "@stowage/test-support";

const child = new URL("../children/serve.ts", import.meta.url);
/** How long a replica may take to start (PGlite or migrations, S3 client). */
const START_TIMEOUT_MS = 60_000;

export interface Replica {
  url: string;
  /** The key asked for with `ISSUE_KEY_FOR`. */
  key: string | undefined;
  /** What the process printed on stderr so far. */
  stderr(): string;
  stop(): Promise<number | null>;
}

/** Starts one app process (`test/children/serve.ts`) with exactly `env` and waits until it listens. */
export async function startReplica(dataDir: string, env: Record<string, string>): Promise<Replica> {
  const process_: ChildProcess = spawnChild(child, [dataDir], { env });
  let stdout = "";
  let stderr = "";
  process_.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => process_.once("exit", (code) => resolve(code)));
  const started = await new Promise<{ url: string; key?: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`replica did not start: ${stderr}`)), START_TIMEOUT_MS);
    process_.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      const line = stdout.split("\n").find((text) => text.startsWith("{"));
      if (line) {
        clearTimeout(timer);
        resolve(JSON.parse(line) as { url: string; key?: string });
      }
    });
    exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`replica exited with ${code} before it listened: ${stderr}`));
    });
  });
  return {
    url: started.url,
    key: started.key,
    stderr: () => stderr,
    async stop() {
      if (process_.exitCode === null) process_.kill("SIGTERM");
      return exited;
    },
  };
}
