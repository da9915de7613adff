/**
 * `pnpm --filter @stowage/readme-examples check`: every package README as a new user meets it.
 * Packs each published package; for each README, installs its install lines into a fresh npm
 * project of its own (so one README cannot lend another a package it forgot), type-checks every
 * ts example with TypeScript 5.9 (`tsc --init`'s strict options, nodenext) and runs the
 * `runnable` ones with Node, each in an empty temporary directory, without any server's settings
 * in its environment and — when the check runs as root, as in CI — as an unprivileged user, so an
 * example that writes outside its directory fails as it would for a user. What a runnable example
 * promises to print (the comment after a one-line `console.log(…);`) must be what it printed.
 * Also checks that an agent-only install of `@stowage/uploads` pulls in no AWS SDK. The
 * packages' `dist/` must be built first. Exits 1 with every problem listed.
 */
import { existsSync } from "node:fs";
import { chmod, chown, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { createExampleProject } from "./example-project.ts";
import { expectedOutputs, unkeptOutputs } from "./expected-output.ts";
import { packTarballs } from "./pack-tarballs.ts";
import { unpinnedPeers } from "./peer-pins.ts";
import { type PublishedPackage, publishedPackages } from "./published-packages.ts";
import { runCommand } from "./run-command.ts";
import { type ReadmeExample, type ReadmeScan, scanReadme } from "./scan-readme.ts";

const RUN_TIMEOUT_MS = 120_000;
/** Settings that would point an example at a server: a runnable example must need none. */
const SERVER_SETTINGS = /^(DATABASE_URL|S3_|STOWAGE_|CONTINUE_|AGENT_SESSION_ID|CLAUDE_CONFIG_DIR)/;
/** Who runs the examples when the check runs as root: `nobody`, who can write only where it is let. */
const UNPRIVILEGED = { uid: 65_534, gid: 65_534 };
/** README projects installed at once (npm is mostly waiting on the network and the disk). */
const INSTALLS_AT_ONCE = 3;

interface PlacedExample extends ReadmeExample {
  pkg: PublishedPackage;
  file: string;
}

interface ReadmeProject {
  pkg: PublishedPackage;
  scan: ReadmeScan;
  dir: string;
  examples: PlacedExample[];
}

async function main(): Promise<number> {
  const problems: string[] = [];
  const packages = await publishedPackages();
  const work = await mkdtemp(join(tmpdir(), "stowage-readme-examples-"));
  // Readable by the unprivileged user who runs the examples (mkdtemp makes it 0700).
  await chmod(work, 0o755);
  try {
    const projects: ReadmeProject[] = [];
    for (const pkg of packages) {
      const readme = await readFile(pkg.readme, "utf8").catch(() => undefined);
      if (readme === undefined) {
        problems.push(`${pkg.name}: no README.md`);
        continue;
      }
      const scan = scanReadme(readme);
      for (const problem of [...scan.problems, ...unpinnedPeers(scan, packages)])
        problems.push(`${pkg.name} README ${problem}`);
      if (scan.examples.length === 0) continue;
      if (!scan.installs.includes(pkg.name)) {
        problems.push(`${pkg.name} README: no npm install line installs ${pkg.name}`);
      }
      const examples = scan.examples.map((example) => ({
        ...example,
        pkg,
        file: `${basename(pkg.dir)}-line-${example.line}.ts`,
      }));
      projects.push({ pkg, scan, dir: join(work, "projects", basename(pkg.dir)), examples });
    }

    const tarballDir = join(work, "tarballs");
    await mkdir(tarballDir);
    const tarballs = await packTarballs(packages, tarballDir);
    console.log(`packed ${tarballs.size} packages`);
    for (const [name, tarball] of tarballs) problems.push(...(await checkPackedManifest(name, tarball)));

    problems.push(...(await checkAgentOnlyInstall(join(work, "agent-only"), tarballs)));

    await inBatches(projects, INSTALLS_AT_ONCE, async (project) => {
      await createExampleProject(project.dir, project.scan.installs, tarballs, {
        withToolchain: true,
        versions: project.scan.versions,
      });
      console.log(`${project.pkg.name} README: installed ${project.scan.installs.join(" ")}`);
    });

    let checked = 0;
    let failed = 0;
    let ran = 0;
    for (const project of projects) {
      const failedFiles = await typeCheck(project, problems);
      checked += project.examples.length;
      failed += failedFiles.size;
      for (const example of project.examples.filter((e) => e.mode === "run" && !failedFiles.has(e.file))) {
        const problem = await runExample(project.dir, example);
        ran++;
        if (problem) problems.push(problem);
      }
    }
    console.log(`type-checked ${checked} examples, ${failed} failed; ran ${ran} runnable examples`);
  } finally {
    if (problems.length === 0) await rm(work, { recursive: true, force: true });
    else console.error(`kept ${work} for inspection`);
  }
  for (const problem of problems) console.error(`✗ ${problem}`);
  console.log(problems.length === 0 ? "every README example checks out" : `${problems.length} problems`);
  return problems.length === 0 ? 0 : 1;
}

async function inBatches<T>(items: readonly T[], size: number, work: (item: T) => Promise<void>) {
  for (let start = 0; start < items.length; start += size) {
    await Promise.all(items.slice(start, start + size).map(work));
  }
}

/** Type-checks a README's examples in its own project; the files that failed. */
async function typeCheck(project: ReadmeProject, problems: string[]): Promise<Set<string>> {
  for (const example of project.examples)
    await writeFile(join(project.dir, "examples", example.file), `${example.code}\n`);
  const tsc = await runCommand(
    process.execPath,
    [join(project.dir, "node_modules/typescript/bin/tsc"), "-p", "."],
    { cwd: project.dir, timeoutMs: 300_000 },
  );
  const failedFiles = new Set<string>();
  if (tsc.code === 0) return failedFiles;
  for (const example of project.examples) {
    const errors = tsc.output.split("\n").filter((line) => line.startsWith(`examples/${example.file}(`));
    if (errors.length === 0) continue;
    failedFiles.add(example.file);
    problems.push(`${where(example)} does not type-check:\n  ${errors.join("\n  ")}`);
  }
  if (failedFiles.size === 0) problems.push(`${project.pkg.name} README: tsc failed:\n${tsc.output}`);
  return failedFiles;
}

function where(example: PlacedExample): string {
  return `${example.pkg.name} README line ${example.line} (${example.mode})`;
}

/**
 * Runs an example's compiled JavaScript with Node in an empty directory that is also its HOME
 * and TMPDIR, as the unprivileged user when this runs as root; then compares what it printed
 * with what its comments promise.
 */
async function runExample(project: string, example: PlacedExample): Promise<string | undefined> {
  const cwd = await mkdtemp(join(tmpdir(), "stowage-example-"));
  const unprivileged = process.getuid?.() === 0;
  if (unprivileged) await chown(cwd, UNPRIVILEGED.uid, UNPRIVILEGED.gid);
  try {
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !SERVER_SETTINGS.test(name)),
    );
    const script = join(project, "out", example.file.replace(/\.ts$/, ".js"));
    const result = await runCommand(process.execPath, [script], {
      cwd,
      env: { ...env, HOME: cwd, TMPDIR: cwd },
      timeoutMs: RUN_TIMEOUT_MS,
      ...(unprivileged ? UNPRIVILEGED : {}),
    });
    if (result.code !== 0) {
      const why = result.timedOut ? `timed out after ${RUN_TIMEOUT_MS / 1000} s` : `exited ${result.code}`;
      return `${where(example)} ${why}:\n${result.output}`;
    }
    const unkept = unkeptOutputs(result.output, expectedOutputs(example.code));
    if (unkept.length === 0) return undefined;
    const promises = unkept.map((promise) => `line ${example.line + promise.line}: // ${promise.text}`);
    return `${where(example)} did not print what its comments say:\n  ${promises.join("\n  ")}\nit printed:\n${result.output}`;
  } finally {
    await rm(cwd, { recursive: true, force: true });
  }
}

/** The manifest in a tarball is a user's: no scripts, no devDependencies, no `workspace:` ranges, LICENSE beside it. */
async function checkPackedManifest(name: string, tarball: string): Promise<string[]> {
  const read = (file: string) =>
    runCommand("tar", ["-xzOf", tarball, `package/${file}`], { cwd: tmpdir(), timeoutMs: 60_000 });
  const manifest = await read("package.json");
  if (manifest.code !== 0) return [`${name}: no package.json in its tarball`];
  const { scripts, devDependencies, ...published } = JSON.parse(manifest.output) as Record<string, unknown>;
  const problems: string[] = [];
  if (scripts !== undefined || devDependencies !== undefined) {
    problems.push(`${name}: its tarball's package.json keeps scripts or devDependencies`);
  }
  if (JSON.stringify(published).includes('"workspace:'))
    problems.push(`${name}: a workspace: range in its tarball`);
  for (const file of ["LICENSE", "CHANGELOG.md", "README.md"]) {
    if ((await read(file)).code !== 0) problems.push(`${name}: no ${file} in its tarball`);
  }
  return problems;
}

/**
 * The agent side alone (`@stowage/uploads/agent`) installs and loads without any AWS SDK, and the
 * testing entry, without vitest, fails saying to install it.
 */
async function checkAgentOnlyInstall(dir: string, tarballs: ReadonlyMap<string, string>): Promise<string[]> {
  await createExampleProject(dir, ["@stowage/uploads"], tarballs, { withToolchain: false });
  const problems: string[] = [];
  if (existsSync(join(dir, "node_modules/@aws-sdk"))) {
    problems.push("an install of @stowage/uploads alone pulls in @aws-sdk/*");
  }
  const load = await runCommand(
    process.execPath,
    ["--input-type=module", "-e", 'await import("@stowage/uploads/agent")'],
    {
      cwd: dir,
      timeoutMs: 60_000,
    },
  );
  if (load.code !== 0) problems.push(`@stowage/uploads/agent does not load on its own:\n${load.output}`);
  // Without vitest (an optional peer), a testing entry says what to install.
  const testing = await runCommand(
    process.execPath,
    ["--input-type=module", "-e", 'await import("@stowage/uploads/testing")'],
    { cwd: dir, timeoutMs: 60_000 },
  );
  if (testing.code === 0 || !testing.output.includes("npm install -D vitest")) {
    problems.push(`@stowage/uploads/testing without vitest does not say to install it:\n${testing.output}`);
  }
  return problems;
}

process.exitCode = await main();
