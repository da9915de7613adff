import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { runCommand } from "./run-command.ts";

/** The compiler a new user has: TypeScript 5.9 and Node 20's types. */
const TOOLCHAIN = { typescript: "~5.9.3", "@types/node": "^20.19.0" };

/**
 * `tsc --init`'s options of TypeScript 5.9 (strict, nodenext, exact optional properties,
 * unchecked index access), emitting JavaScript that Node 20 runs.
 */
const TSCONFIG = {
  compilerOptions: {
    module: "nodenext",
    target: "es2022",
    types: ["node"],
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    strict: true,
    verbatimModuleSyntax: true,
    isolatedModules: true,
    noUncheckedSideEffectImports: true,
    moduleDetection: "force",
    skipLibCheck: true,
    rootDir: "examples",
    outDir: "out",
  },
  include: ["examples"],
};

/**
 * A fresh npm project in `dir` with `packages` installed as a user would: `@stowage/*` from the
 * packed tarballs (their own `@stowage/*` dependencies too, through `overrides`), the rest from
 * the registry at the range an install line gives, else the latest version. Optional dependencies are left out (the Agent SDK's
 * platform binary is hundreds of MB; no example runs it).
 */
export async function createExampleProject(
  dir: string,
  packages: readonly string[],
  tarballs: ReadonlyMap<string, string>,
  options: { withToolchain: boolean; versions?: Readonly<Record<string, string>> },
): Promise<void> {
  const local = Object.fromEntries([...tarballs].map(([name, path]) => [name, `file:${path}`]));
  const dependencies: Record<string, string> = {};
  for (const name of packages) {
    if (name.startsWith("@stowage/") && !local[name])
      throw new Error(`${name} is installed but not published`);
    dependencies[name] = local[name] ?? options.versions?.[name] ?? "latest";
  }
  await mkdir(join(dir, "examples"), { recursive: true });
  const manifest = {
    name: "stowage-readme-examples",
    private: true,
    type: "module",
    dependencies,
    devDependencies: options.withToolchain ? TOOLCHAIN : {},
    overrides: local,
  };
  await writeFile(join(dir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  await writeFile(join(dir, "tsconfig.json"), `${JSON.stringify(TSCONFIG, null, 2)}\n`);
  const result = await runCommand("npm", ["install", "--omit=optional", "--no-audit", "--no-fund"], {
    cwd: dir,
    timeoutMs: 600_000,
  });
  if (result.code !== 0)
    throw new Error(`npm install failed in ${dir} (exit ${result.code}):\n${result.output}`);
}
