import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";

export interface ReferenceSourceOptions {
  /** `owner/name` of the GitHub repository that publishes the peer's code. */
  repo: string;
  /** Path of the file in that repository. */
  path: string;
  /** Directory the file is written to (a bench's own, so its imports resolve); removed by `dispose`. */
  directory: string;
  /** Local git mirrors, laid out as `<owner>+<name>/repo`; default `/work/.mirror`. */
  mirrors?: string;
}

export interface ReferenceSource {
  /** The file, ready to `import()` under tsx. */
  file: string;
  /** Where it came from (a commit of a local mirror, or a URL). */
  origin: string;
  dispose(): Promise<void>;
}

/**
 * Brings a peer's published source file (e.g. a reference adapter that is not on npm) next to a
 * bench at run time, so it is measured but never committed: from a local git mirror when there is
 * one (see `mirrors`),
 * else from GitHub's raw files of the default branch.
 */
export async function referenceSource(options: ReferenceSourceOptions): Promise<ReferenceSource> {
  const mirrors = options.mirrors ?? "/work/.mirror";
  const gitDir = join(mirrors, options.repo.replace("/", "+"), "repo");
  let text: string;
  let origin: string;
  if (existsSync(gitDir)) {
    const commit = execFileSync("git", ["--git-dir", gitDir, "rev-parse", "HEAD"], {
      encoding: "utf8",
    }).trim();
    text = execFileSync("git", ["--git-dir", gitDir, "show", `${commit}:${options.path}`], {
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
    });
    origin = `${options.repo}@${commit.slice(0, 12)}:${options.path}`;
  } else {
    const url = `https://raw.githubusercontent.com/${options.repo}/HEAD/${options.path}`;
    // Offline, a bare "fetch failed" says nothing of the mirror that would have served it.
    const response = await fetch(url).catch((err: unknown) => {
      throw new Error(`no mirror of ${options.repo} at ${gitDir}, and ${url} could not be fetched`, {
        cause: err,
      });
    });
    if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
    text = await response.text();
    origin = url;
  }
  await mkdir(options.directory, { recursive: true });
  const file = join(options.directory, options.path.split("/").at(-1)!);
  await writeFile(file, text);
  return { file, origin, dispose: () => rm(options.directory, { recursive: true, force: true }) };
}
