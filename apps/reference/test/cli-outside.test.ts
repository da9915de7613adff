// The CLI as a user runs it: a child process started in the user's own directory, with nothing
// but its environment and arguments, read through its exit status, stdout and stderr.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { installedPackages, runChild } from "@stowage/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnStowage } from "./support/cli.js";

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
let home: string;
let dataDir: string;
let env: Record<string, string>;

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), "stowage-user-"));
  dataDir = join(home, "data");
  // No S3 or PostgreSQL from the environment the tests run in: the embedded defaults.
  env = { STOWAGE_DATA_DIR: dataDir };
  await writeFile(join(home, "README.md"), "the user's own README\n");
});
afterAll(() => rm(home, { recursive: true, force: true }));

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

describe("stowage run from the user's directory", () => {
  it("prints its version and help, exit status 0", async () => {
    const manifest = JSON.parse(await readFile(new URL("../package.json", import.meta.url), "utf8"));
    const version = await spawnStowage(["--version"], { cwd: home, env });
    expect(version).toMatchObject({ code: 0, stdout: `${manifest.version}\n` });
    const help = await spawnStowage(["--help"], { cwd: home, env });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Usage: stowage [options] [command]");
  });

  it("stores the file the user named, relative to the user's directory, and writes --out there", async () => {
    const put = await spawnStowage(["blob", "put", "README.md"], { cwd: home, env });
    expect(put.stderr).toBe("");
    expect(put).toMatchObject({
      code: 0,
      stdout: `blob:sha256:${sha256("the user's own README\n")}  22 bytes  stored  README.md\n`,
    });
    const get = await spawnStowage(["blob", "get", sha256("the user's own README\n"), "--out", "copy.md"], {
      cwd: home,
      env,
    });
    expect(get).toMatchObject({ code: 0, stdout: "" });
    expect(await readFile(join(home, "copy.md"), "utf8")).toBe("the user's own README\n");
    // Without --out, stdout has the bytes alone.
    const cat = await spawnStowage(["blob", "get", sha256("the user's own README\n")], { cwd: home, env });
    expect(cat).toMatchObject({ code: 0, stdout: "the user's own README\n" });
  });

  it("through the workspace script (`pnpm -s stowage` runs in the repository root), uses INIT_CWD", async () => {
    const put = await spawnStowage(["blob", "put", "--json", "README.md"], {
      cwd: repoRoot,
      env: { ...env, npm_lifecycle_event: "stowage", INIT_CWD: home },
      entry: "workspace",
    });
    expect(put.code, put.stderr).toBe(0);
    expect(JSON.parse(put.stdout)).toMatchObject([
      { file: "README.md", hash: sha256("the user's own README\n") },
    ]);
  });

  it("the published bin never reads INIT_CWD: a user's npm script named `stowage` that cds means where it went", async () => {
    // `"stowage": "cd sub && stowage blob put file.txt"`, run with `npm run stowage` from home.
    await mkdir(join(home, "sub"), { recursive: true });
    await writeFile(join(home, "sub", "file.txt"), "the file in sub\n");
    await writeFile(join(home, "file.txt"), "the file in home\n");
    const put = await spawnStowage(["blob", "put", "--json", "file.txt"], {
      cwd: join(home, "sub"),
      env: { ...env, npm_lifecycle_event: "stowage", INIT_CWD: home },
    });
    expect(put.code, put.stderr).toBe(0);
    expect(JSON.parse(put.stdout)).toMatchObject([{ file: "file.txt", hash: sha256("the file in sub\n") }]);
  });

  it("the documented `pnpm -s stowage` prints no banner and reads files from where it is typed", async () => {
    // In a sub-directory of the workspace (`-w`: the root's script), with a file of that directory.
    const where = join(repoRoot, "packages", "core");
    const expected = createHash("sha256")
      .update(await readFile(join(where, "package.json")))
      .digest("hex");
    const pnpm = process.env.npm_execpath?.includes("pnpm")
      ? [process.execPath, process.env.npm_execpath]
      : ["npx", "-y", "pnpm@10.34.9"];
    const { stdout, code } = await new Promise<{ stdout: string; code: number | null }>((resolve, reject) => {
      const child = spawn(
        pnpm[0]!,
        [...pnpm.slice(1), "-w", "-s", "stowage", "blob", "put", "package.json", "--json"],
        {
          cwd: where,
          // pnpm needs this environment (PATH, HOME, its caches); the stores stay the embedded ones.
          env: {
            ...Object.fromEntries(
              Object.entries(process.env).filter(
                ([name]) => !name.startsWith("S3_") && !name.startsWith("DATABASE_"),
              ),
            ),
            ...env,
          },
          stdio: ["ignore", "pipe", "inherit"],
        },
      );
      let out = "";
      child.stdout.on("data", (chunk: Buffer) => {
        out += chunk;
      });
      child.on("error", reject);
      child.on("close", (exit) => resolve({ stdout: out, code: exit }));
    });
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject([{ file: "package.json", hash: expected }]);
  });

  it("verifies blobs on an empty data directory without a database, a signing secret or server settings", async () => {
    const empty = join(home, "empty");
    const verify = await spawnStowage(["blob", "verify"], {
      cwd: home,
      env: { STOWAGE_DATA_DIR: empty, STOWAGE_PORT: "not-a-port" },
    });
    expect(verify).toMatchObject({ code: 0, stdout: "0 of 0 blobs verified\n" });
    const made = await readdir(empty).catch(() => [] as string[]);
    expect(made).not.toContain("pglite");
    expect(made).not.toContain("signing-secret");
    // A read of session blobs needs a database, and creates none (nor a signing secret) where there is none.
    const restore = await spawnStowage(["session", "restore", "--user", "u", "--request", "r", "--json"], {
      cwd: home,
      env: { STOWAGE_DATA_DIR: empty, STOWAGE_PORT: "not-a-port" },
    });
    expect(restore.code).toBe(1);
    expect(JSON.parse(restore.stderr)).toMatchObject({ code: "NOT_FOUND" });
    await expect(readdir(empty)).rejects.toMatchObject({ code: "ENOENT" });
    // A command that does need the server's settings still says which one is wrong.
    const sweep = await spawnStowage(["uploads", "sweep", "--older-than-days", "1", "--json"], {
      cwd: home,
      env: { STOWAGE_DATA_DIR: empty, STOWAGE_PORT: "not-a-port" },
    });
    expect(sweep.code).toBe(1);
    expect(JSON.parse(sweep.stderr)).toMatchObject({
      code: "INVALID_INPUT",
      reason: "INVALID_SETTING",
      details: { settings: ["STOWAGE_PORT"] },
    });
  });

  it("prints the API key alone on stdout, so that $(stowage keys create …) is the key", async () => {
    const created = await spawnStowage(["keys", "create", "--user", "alice"], { cwd: home, env });
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^stw_[A-Za-z0-9_-]+\n$/);
    expect(created.stderr).toContain("only its hash is kept");
  });

  it("leaves nothing at --out when the blob is corrupted, exit status 1", async () => {
    await writeFile(join(home, "fragile.txt"), "fragile bytes\n");
    const hash = sha256("fragile bytes\n");
    expect((await spawnStowage(["blob", "put", "fragile.txt"], { cwd: home, env })).code).toBe(0);
    await writeFile(join(dataDir, "objects", "blobs", hash.slice(0, 2), hash), "tampered bytes\n");
    await mkdir(join(home, "out"));
    const get = await spawnStowage(["blob", "get", hash, "--out", "out/fragile.txt", "--json"], {
      cwd: home,
      env,
    });
    expect(get.code).toBe(1);
    // The hash asked for and the one the bytes have; never the store's key of the object.
    expect(JSON.parse(get.stderr)).toEqual({
      error: expect.stringContaining(hash),
      code: "INTEGRITY",
      details: { expected: hash, actual: sha256("tampered bytes\n") },
    });
    expect(get.stderr).not.toContain("blobs/");
    expect(await readdir(join(home, "out"))).toEqual([]);
  });

  it("answers a wrong command line with exit status 2 and a failed command with 1", async () => {
    const unknown = await spawnStowage(["blob", "put", "--nope", "README.md"], { cwd: home, env });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown option '--nope'");
    expect(unknown.stdout).toBe("");
    const missing = await spawnStowage(["blob", "put", "missing.txt", "--json"], { cwd: home, env });
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stderr)).toMatchObject({ code: "NOT_FOUND", reason: "INPUT_FILE_MISSING" });
    expect(missing.stderr).toContain("missing.txt");
  });

  it("names the user's file, never a store key, when an input file cannot be read", async () => {
    // Reading /proc/self/mem at offset 0 fails with EIO after open and stat succeeded: the read
    // happens while the bytes are being stored.
    const rows: [string, string][] = [["/proc/self/mem", "UNAVAILABLE"]];
    if (process.getuid?.() !== 0) {
      // Root reads a mode-000 file; everyone else is refused (EACCES).
      await writeFile(join(home, "locked.txt"), "locked\n", { mode: 0o000 });
      rows.push(["locked.txt", "FORBIDDEN"]);
    }
    for (const [file, code] of rows) {
      const put = await spawnStowage(["blob", "put", file, "--json"], { cwd: home, env });
      expect({ file, code: put.code }).toEqual({ file, code: 1 });
      const error = JSON.parse(put.stderr) as { error: string };
      expect({ file, error }).toMatchObject({ file, error: { code, reason: "INPUT_FILE_UNREADABLE" } });
      expect(error.error).toContain(file);
      expect(put.stderr).not.toMatch(/staging|blobs\//);
      // An upload opens and hashes the file before any request: its result says why, by the
      // file's name. (/proc/self/mem has no upload type and reads as empty at its stat size.)
      if (file.startsWith("/proc/")) continue;
      const upload = await spawnStowage(
        ["upload", file, "--session", "s1", "--key", "stw_x", "--api", "http://127.0.0.1:1", "--json"],
        { cwd: home, env },
      );
      expect({ file, code: upload.code }).toEqual({ file, code: 1 });
      expect(JSON.parse(upload.stdout)).toMatchObject([
        { success: false, filename: basename(file), code, attempts: 0, requests: 0 },
      ]);
      expect(JSON.parse(upload.stderr)).toMatchObject({ code });
    }
  });
});

describe("what a command loads", () => {
  async function loadedBy(argv: string[], childEnv: Record<string, string>): Promise<string[]> {
    const out = join(home, `modules-${argv.join("-").replace(/[^\w.-]/g, "_")}.json`);
    const result = await runChild(new URL("./children/cli-modules.ts", import.meta.url), argv, {
      env: { PATH: process.env.PATH, HOME: home, ...childEnv, MODULES_OUT: out } as NodeJS.ProcessEnv,
      cwd: home,
    });
    expect(result.code, result.stderr).toBe(0);
    return JSON.parse(await readFile(out, "utf8")) as string[];
  }

  it("--help loads no storage, server or database package", async () => {
    const urls = await loadedBy(["--help"], env);
    const packages = installedPackages(urls);
    expect(packages).toContain("commander");
    for (const heavy of ["@electric-sql/pglite", "pg", "drizzle-orm", "hono", "@aws-sdk/client-s3"])
      expect(packages).not.toContain(heavy);
    expect(urls.filter((url) => /\/packages\/(storage-|hot-state|blob-store|sessions)/.test(url))).toEqual(
      [],
    );
  });

  // What a command on stored data must not load: a database or its ORM, the server, the cloud SDK,
  // or a package it does not use (thread-items, hot-state and sessions pull in zod). Their settings
  // readers (`…/env` entries) may load; their barrels, which load the rest, may not.
  const NOT_FOR_STORED_DATA = ["@electric-sql/pglite", "pg", "drizzle-orm", "@aws-sdk/client-s3", "hono"];
  const NOT_FOR_STORED_DATA_SOURCES =
    /\/packages\/(storage-postgres|storage-s3|thread-items|hot-state|sessions|mcp)\/src\/index\.ts$/;

  it.each([
    ["blob verify", ["blob", "verify"]],
    ["keys create", ["keys", "create", "--user", "graph"]],
    ["session list", ["session", "list", "--user", "graph"]],
  ])(
    "%s on the embedded defaults loads only the storage it uses",
    async (_name, argv) => {
      const urls = await loadedBy(argv, { STOWAGE_DATA_DIR: join(home, "verify-graph") });
      const packages = installedPackages(urls);
      for (const heavy of [...NOT_FOR_STORED_DATA, "rate-limiter-flexible", "zod"])
        expect(packages).not.toContain(heavy);
      expect(urls.filter((url) => NOT_FOR_STORED_DATA_SOURCES.test(url))).toEqual([]);
      // What it does use is there: the walk saw the graph.
      expect(urls.some((url) => /\/packages\/storage-fs\/src\//.test(url))).toBe(true);
    },
    60_000,
  );

  it("artifact read loads the session files alone", async () => {
    // A run's artifacts directory holding artifact 0, as `<id>.<tool>.log`.
    await mkdir(join(home, "a-run"), { recursive: true });
    await writeFile(join(home, "a-run", "0.bash.log"), "npm test\n");
    const urls = await loadedBy(["artifact", "read", "artifact://0", "--dir", join(home, "a-run")], {
      STOWAGE_DATA_DIR: join(home, "artifact-graph"),
    });
    for (const heavy of NOT_FOR_STORED_DATA) expect(installedPackages(urls)).not.toContain(heavy);
    expect(urls.filter((url) => NOT_FOR_STORED_DATA_SOURCES.test(url))).toEqual([]);
    expect(urls.some((url) => /\/packages\/artifacts\/src\//.test(url))).toBe(true);
  });
});
