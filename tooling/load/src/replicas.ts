import { type ChildProcess, spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { fileURLToPath, pathToFileURL } from "node:url";

/** The app's CLI entry, run from its TypeScript sources (no build), as `stowage serve`. */
const APP_BIN = fileURLToPath(new URL("../../../apps/reference/src/bin.ts", import.meta.url));
const TSX = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
/** How long a replica may take to answer /readyz (tsx compiling the sources, migrations). */
const START_TIMEOUT_MS = 120_000;
/** How long a replica may take to stop on SIGTERM (it drains first) before it is killed. */
const STOP_TIMEOUT_MS = 30_000;

/**
 * Every replica process alive, killed when the harness exits however it exits (a watchdog, a
 * signal, an uncaught error): a replica must never outlive the run that started it.
 */
const running = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

export interface Replica {
  readonly index: number;
  readonly url: string;
  readonly dataDir: string;
  /** The highest resident set size of any process this replica ran, in bytes (VmHWM). */
  peakRssBytes(): Promise<number>;
  /** CPU time (user + system) its processes have used so far, a killed one's included, in seconds. */
  cpuSeconds(): Promise<number>;
  /** SIGKILL, then the same data directory and port again; resolves once it is ready. */
  crashAndRestart(): Promise<void>;
  /** SIGTERM (a graceful stop: the server drains); SIGKILL after a bound. */
  stop(): Promise<void>;
  /** What the process wrote on stderr lately. */
  stderrTail(): string;
}

export interface ReplicaOptions {
  index: number;
  dataDir: string;
  env: Record<string, string>;
  /** Node flags (`--cpu-prof`, …). */
  nodeFlags?: string[];
}

/** A free port on 127.0.0.1, asked of the kernel, so that a restarted replica keeps its URL. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Starts one app process (`stowage serve`) on PostgreSQL and S3 and waits until `/readyz` is 200. */
export async function startReplica(options: ReplicaOptions): Promise<Replica> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let child: ChildProcess;
  let stderr = "";
  let peak = 0;
  const launch = async () => {
    child = spawn(
      process.execPath,
      [...(options.nodeFlags ?? []), "--import", TSX, "--conditions=@stowage/source", APP_BIN, "serve"],
      {
        cwd: options.dataDir,
        env: {
          ...options.env,
          STOWAGE_DATA_DIR: options.dataDir,
          STOWAGE_PORT: String(port),
          STOWAGE_HOST: "127.0.0.1",
        },
        // Its request log is written (what a deployment pays for) and dropped.
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    const started = child;
    running.add(started);
    started.once("exit", () => running.delete(started));
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-8_000);
    });
    await untilReady(url, child);
  };
  // CPU of the processes this replica ran before a crash; the live one's is read from /proc.
  let cpuBefore = 0;
  const liveCpu = async () => {
    const pid = child.pid;
    if (pid === undefined || child.exitCode !== null) return 0;
    const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
    // Fields 14 and 15 (utime, stime, in clock ticks of 1/100 s), after the command in parentheses.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11] ?? 0) + Number(fields[12] ?? 0)) / 100;
  };
  const sampleRss = async () => {
    const pid = child.pid;
    if (pid === undefined || child.exitCode !== null) return;
    const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
    const match = /VmHWM:\s+(\d+) kB/.exec(status);
    if (match) peak = Math.max(peak, Number(match[1]) * 1024);
  };
  const exited = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once("exit", () => resolve());
    });
  await launch();
  return {
    index: options.index,
    url,
    dataDir: options.dataDir,
    async peakRssBytes() {
      await sampleRss();
      return peak;
    },
    cpuSeconds: async () => cpuBefore + (await liveCpu()),
    async crashAndRestart() {
      await sampleRss();
      cpuBefore += await liveCpu();
      child.kill("SIGKILL");
      await exited();
      await launch();
    },
    async stop() {
      await sampleRss();
      cpuBefore += await liveCpu();
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
      await exited();
      clearTimeout(timer);
    },
    stderrTail: () => stderr,
  };
}

async function untilReady(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      throw new Error(`the replica at ${url} exited with ${child.exitCode} before it was ready`);
    try {
      const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(5_000) });
      await response.body?.cancel();
      if (response.status === 200) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`the replica at ${url} was not ready within ${START_TIMEOUT_MS / 1000} s`);
}
