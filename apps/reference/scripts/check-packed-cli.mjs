// CI check of the published CLI as a new user meets it: `pnpm pack` @stowage/cli and every
// workspace package it depends on (their dist/ built first), `npm install` the tarballs into a
// fresh npm project in a temp directory, then run `npx stowage` there: --help, --version, the npx
// package name, `blob put` + `blob get` on a temp data directory, `serve` with its viewer, and the demo.
// Prints one line per check and "N passed, N failed"; exits 1 on any failure.
// Usage: pnpm --filter @stowage/cli run check:packed [--no-build]
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const appDir = fileURLToPath(new URL("..", import.meta.url));
const root = fileURLToPath(new URL("../../..", import.meta.url));
// pnpm as this script was started by it (`pnpm --filter @stowage/cli run check:packed`), else the
// pinned version through npx (slower: npx resolves it on every call).
const PNPM = process.env.npm_execpath?.includes("pnpm")
  ? [process.execPath, process.env.npm_execpath]
  : ["npx", "-y", "pnpm@10.34.9"];

/**
 * The machine's environment without Stowage's own settings: a new user's `npx stowage` runs on
 * embedded defaults, never on the S3 bucket or PostgreSQL `.ci/run` exported for the suites (whose
 * blobs `blob verify` would then count). npm's and the network's settings stay.
 */
const userEnv = Object.fromEntries(
  Object.entries(process.env).filter(
    ([name]) => !name.startsWith("S3_") && !name.startsWith("STOWAGE_") && !name.startsWith("DATABASE_"),
  ),
);

/** Runs a command to completion (bounded), returning its exit code and output. */
function run(command, args, options = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd ?? root,
      env: { ...userEnv, ...options.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 300_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

async function must(command, args, options) {
  const result = await run(command, args, options);
  if (result.code !== 0) {
    throw new Error(
      `${command} ${args.join(" ")} exited ${result.code}:\n${result.stdout}\n${result.stderr}`,
    );
  }
  return result;
}

/** Directories of the workspace packages @stowage/cli needs at run time (its dependencies, recursively). */
async function runtimeWorkspacePackages() {
  const byName = new Map();
  for (const parent of ["packages", "apps"]) {
    for (const entry of await readdir(join(root, parent), { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const dir = join(root, parent, entry.name);
      const manifest = await readFile(join(dir, "package.json"), "utf8").catch(() => undefined);
      if (manifest) byName.set(JSON.parse(manifest).name, { dir, manifest: JSON.parse(manifest) });
    }
  }
  const needed = new Map();
  const visit = (name) => {
    if (needed.has(name)) return;
    const pkg = byName.get(name);
    if (!pkg) throw new Error(`workspace package ${name} not found`);
    if (pkg.manifest.private) throw new Error(`${name} is private but @stowage/cli needs it at run time`);
    needed.set(name, pkg.dir);
    for (const [dep, range] of Object.entries(pkg.manifest.dependencies ?? {})) {
      if (String(range).startsWith("workspace:")) visit(dep);
    }
  };
  visit("@stowage/cli");
  return needed;
}

const results = [];
async function check(name, body) {
  try {
    await body();
    results.push(true);
    console.log(`ok    ${name}`);
  } catch (err) {
    results.push(false);
    console.log(`FAIL  ${name}\n${err instanceof Error ? err.message : String(err)}`);
  }
}

function expect(condition, message) {
  if (!condition) throw new Error(message);
}

/** Starts `stowage serve` on a free port, reads its URL from stderr, and fetches /healthz and the viewer. */
async function checkServe(project, env) {
  // The installed bin itself, in its own process group, so that stopping it stops everything.
  const child = spawn(join(project, "node_modules", ".bin", "stowage"), ["serve"], {
    cwd: project,
    env: { ...userEnv, ...env, STOWAGE_PORT: "0" },
    stdio: ["ignore", "ignore", "pipe"],
    detached: true,
  });
  const closed = new Promise((resolve) => child.on("close", resolve));
  try {
    const url = await new Promise((resolve, reject) => {
      let stderr = "";
      const timer = setTimeout(() => reject(new Error(`no "serving" line in 60 s:\n${stderr}`)), 60_000);
      child.stderr.on("data", (chunk) => {
        stderr += chunk;
        const match = /serving (http:\/\/\S+)/.exec(stderr);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]);
        }
      });
      child.on("close", (code) => reject(new Error(`serve exited ${code}:\n${stderr}`)));
    });
    const health = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(10_000) });
    expect(health.status === 200, `/healthz answered ${health.status}`);
    const viewer = await fetch(`${url}/`, { signal: AbortSignal.timeout(10_000) });
    expect(viewer.status === 200, `the viewer answered ${viewer.status}: are its assets in the tarball?`);
    expect((await viewer.text()).includes("<html"), "the viewer's page is not HTML");
  } finally {
    try {
      process.kill(-child.pid, "SIGTERM");
    } catch {
      // Already gone.
    }
    const timer = setTimeout(() => process.kill(-child.pid, "SIGKILL"), 10_000);
    await closed;
    clearTimeout(timer);
  }
}

const work = await mkdtemp(join(tmpdir(), "stowage-packed-cli-"));
try {
  const packages = await runtimeWorkspacePackages();
  if (!process.argv.includes("--no-build")) {
    await must(PNPM[0], [...PNPM.slice(1), "exec", "turbo", "run", "build", "--filter=@stowage/cli..."], {
      timeoutMs: 900_000,
    });
  }
  const tarballs = join(work, "tarballs");
  await mkdir(tarballs);
  for (const dir of packages.values()) {
    await must(PNPM[0], [...PNPM.slice(1), "pack", "--pack-destination", tarballs], { cwd: dir });
  }
  const project = join(work, "project");
  await mkdir(project);
  await writeFile(
    join(project, "package.json"),
    `${JSON.stringify({ name: "new-user", version: "1.0.0", private: true, type: "module" }, null, 2)}\n`,
  );
  const files = (await readdir(tarballs)).filter((file) => file.endsWith(".tgz"));
  console.log(`packed ${files.length} tarballs: ${files.join(", ")}`);
  await must("npm", ["install", "--no-audit", "--no-fund", ...files.map((file) => join(tarballs, file))], {
    cwd: project,
    timeoutMs: 900_000,
  });
  const env = { STOWAGE_DATA_DIR: join(work, "data") };
  const stowage = (...args) => run("npx", ["stowage", ...args], { cwd: project, env, timeoutMs: 120_000 });
  const manifest = JSON.parse(await readFile(join(appDir, "package.json"), "utf8"));

  await check("npx stowage --help", async () => {
    const help = await stowage("--help");
    expect(help.code === 0, `exit ${help.code}: ${help.stderr}`);
    expect(help.stdout.includes("Usage: stowage"), help.stdout);
  });
  await check("npx @stowage/cli --help", async () => {
    const help = await run("npx", ["@stowage/cli", "--help"], { cwd: project, env, timeoutMs: 120_000 });
    expect(help.code === 0, `exit ${help.code}: ${help.stderr}`);
    expect(help.stdout.includes("Usage: stowage"), help.stdout);
  });
  await check("npx stowage --version", async () => {
    const version = await stowage("--version");
    expect(version.code === 0 && version.stdout === `${manifest.version}\n`, JSON.stringify(version));
  });
  await check("npx stowage blob put + blob get (relative paths in the user's directory)", async () => {
    const content = "bytes a new user stores\n";
    await writeFile(join(project, "note.txt"), content);
    const hash = createHash("sha256").update(content).digest("hex");
    const put = await stowage("blob", "put", "note.txt", "--json");
    expect(put.code === 0, `put exit ${put.code}: ${put.stderr}`);
    expect(JSON.parse(put.stdout)[0]?.hash === hash, put.stdout);
    const get = await stowage("blob", "get", `blob:sha256:${hash}`, "--out", "copy.txt");
    expect(get.code === 0, `get exit ${get.code}: ${get.stderr}`);
    expect((await readFile(join(project, "copy.txt"), "utf8")) === content, "copy.txt differs");
    const verify = await stowage("blob", "verify", "--json");
    expect(verify.code === 0 && JSON.parse(verify.stdout).verified === 1, verify.stdout);
  });
  await check("npx stowage serve (API and viewer from the tarball)", () => checkServe(project, env));
  await check("npx stowage demo --exit (the demo and its files from the tarball)", async () => {
    const demo = await run("npx", ["stowage", "demo", "--exit"], {
      cwd: project,
      env: { STOWAGE_DATA_DIR: join(work, "demo-data"), STOWAGE_PORT: "0" },
      timeoutMs: 300_000,
    });
    expect(demo.code === 0, `exit ${demo.code}: ${demo.stderr.slice(-2000)}`);
    expect(demo.stderr.includes("demo finished: every step above was checked."), demo.stderr.slice(-2000));
  });
} catch (err) {
  results.push(false);
  console.log(`FAIL  setup\n${err instanceof Error ? err.stack : String(err)}`);
} finally {
  await rm(work, { recursive: true, force: true });
}
const failed = results.filter((passed) => !passed).length;
console.log(`${results.length - failed} passed, ${failed} failed`);
process.exitCode = failed > 0 ? 1 : 0;
