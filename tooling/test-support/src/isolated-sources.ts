import { cp, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runChild } from "./run-child.js";
import { tempDirectory } from "./temp-directory.js";

const REPOSITORY = fileURLToPath(new URL("../../../", import.meta.url));

/** Imports an entry from the user's project; prints how it failed as JSON, `{}` when it loaded. */
const IMPORT_ENTRY = `try {
  await import(process.argv[2]);
  console.log("{}");
} catch (err) {
  console.log(JSON.stringify({ code: err.code, reason: err.reason, message: err.message }));
}
`;

/** How an import in an isolated project failed (all undefined when it loaded). */
export interface IsolatedImport {
  code?: string;
  reason?: string;
  message?: string;
}

/** A project of {@link isolatedSources}: import one of its packages' entries there, as its user would. */
export interface IsolatedProject {
  dir: string;
  /** Imports `specifier` in a fresh Node process started in the project, with only PATH and HOME. */
  importEntry(specifier: string): Promise<IsolatedImport>;
}

/**
 * A temp project (removed after the test file) whose `node_modules` holds copies of workspace
 * packages (`packages/<name>`: package.json and src/) and nothing else: what an npm user has who
 * installed them without their optional peers (vitest, the Agent SDK). Its imports run against the
 * sources (`@stowage/source`), in a child process without this one's environment (pnpm's NODE_PATH
 * would find the repository's packages).
 */
export async function isolatedSources(packages: readonly string[]): Promise<IsolatedProject> {
  const dir = await tempDirectory("stowage-isolated-");
  await writeFile(join(dir, "package.json"), JSON.stringify({ name: "user-project", type: "module" }));
  // In the project, so that the imports resolve there and not beside this file.
  await writeFile(join(dir, "import-entry.mjs"), IMPORT_ENTRY);
  for (const name of packages) {
    const to = join(dir, "node_modules", "@stowage", name);
    await mkdir(to, { recursive: true });
    await cp(join(REPOSITORY, "packages", name, "package.json"), join(to, "package.json"));
    await cp(join(REPOSITORY, "packages", name, "src"), join(to, "src"), { recursive: true });
  }
  return {
    dir,
    async importEntry(specifier) {
      const run = await runChild(join(dir, "import-entry.mjs"), [specifier], {
        cwd: dir,
        env: { PATH: process.env.PATH, HOME: process.env.HOME },
      });
      if (run.code !== 0) throw new Error(`the import of ${specifier} crashed:\n${run.stderr}`);
      return JSON.parse(run.stdout) as IsolatedImport;
    },
  };
}
