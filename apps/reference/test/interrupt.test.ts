import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { seedEmbeddedDatabase } from "./support/seed-embedded-database.js";

const appDir = fileURLToPath(new URL("..", import.meta.url));
const dataDirs: string[] = [];
afterAll(() => Promise.all(dataDirs.map((dir) => rm(dir, { recursive: true, force: true }))));

describe("Ctrl-C on a command that serves", () => {
  it.each([
    ["demo", "serving the viewer — Ctrl-C stops", "stopping the server"],
    ["serve", "(Ctrl-C stops)", ""],
  ])(
    "stowage %s closes the server and exits 0, with nothing on stderr after the ready line but its stop",
    async (command, READY, stop) => {
      const dataDir = await mkdtemp(join(tmpdir(), "stowage-interrupt-"));
      dataDirs.push(dataDir);
      // Its subject is Ctrl-C, not a first start (demo.test.ts's): no initdb, seconds of CPU.
      await seedEmbeddedDatabase(dataDir);
      const env = Object.fromEntries(
        Object.entries(process.env).filter(([name]) => !name.startsWith("S3_") && name !== "DATABASE_URL"),
      );
      // The command line of this package's `pnpm demo` script, in its own process group as a
      // terminal's foreground job: Ctrl-C signals every process in it. (One process: the `tsx` CLI
      // would relay the signal and SIGKILL its child if it did not answer within 30 ms, which a
      // busy machine does not always manage; that is the exit code 130 this test once saw.)
      const child = spawn(
        process.execPath,
        ["--conditions=@stowage/source", "--import", "tsx", "src/workspace-bin.ts", command],
        {
          cwd: appDir,
          env: { ...env, STOWAGE_DATA_DIR: dataDir, STOWAGE_PORT: "0" },
          detached: true,
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk) => {
        stdout += chunk;
      });
      const exited = new Promise<number | string | null>((resolve) =>
        child.on("exit", (code, signal) => resolve(code ?? signal)),
      );
      await new Promise<void>((resolve, reject) => {
        child.stderr.on("data", (chunk) => {
          stderr += chunk;
          if (stderr.includes(READY)) resolve();
        });
        exited.then((code) =>
          reject(new Error(`stowage ${command} exited (${code}) before serving:\n${stderr}`)),
        );
      });
      process.kill(-child.pid!, "SIGINT");
      expect(await exited).toBe(0);
      expect(stdout).toBe("");
      expect(stderr.slice(stderr.indexOf(READY) + READY.length).trim()).toBe(stop);
    },
    150_000,
  );
});
