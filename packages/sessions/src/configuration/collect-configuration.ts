import { readdir } from "node:fs/promises";
import { errnoOf, pathSegmentProblem, StowageError, throwIfAborted } from "@stowage/core";
import { type OpenedDirectory, openDirectoryBeneath } from "@stowage/core/fs";
import { readSessionFile, type SkippedFile } from "../archive/collect-files.js";
import { type ConfigurationLayout, SKIPPED_CONFIG_DIRECTORY_NAMES } from "./configuration-layout.js";

/** A secret removed from a configuration file before it was captured. */
export interface SecretLeftOut {
  /** The archive path of the file, which is captured without it. */
  path: string;
  /** Where it was in the file's JSON: `env.ANTHROPIC_API_KEY`, `mcpServers.github.headers.Authorization`. */
  field: string;
}

/** Configuration read into memory (its secrets already left out), with what was not taken. */
export interface CollectedConfiguration {
  sources: { path: string; bytes: Uint8Array }[];
  skipped: SkippedFile[];
  secretsLeftOut: SecretLeftOut[];
  /** Bytes read, so that the caller keeps its own bound. */
  bytes: number;
}

interface Walk {
  root: string;
  /** Segments below `root` to the layout's base, not part of the archive path. */
  below: readonly string[];
  layout: ConfigurationLayout;
  prefix: string;
  limit: number;
  signal?: AbortSignal;
  found: CollectedConfiguration;
}

/** Reads `root/segments…` (a file of the layout) without following a link; missing is fine. */
async function takeFile(walk: Walk, segments: string[]): Promise<void> {
  const path = `${walk.prefix}${segments.join("/")}`;
  const read = await readSessionFile(
    { root: walk.root, segments: [...walk.below, ...segments] },
    walk.limit - walk.found.bytes,
    walk.signal,
  );
  if ("refused" in read) {
    if (read.refused !== "missing") {
      walk.found.skipped.push({
        path,
        reason: read.refused === "symlink" ? "symlink (not followed)" : "not a regular file",
      });
    }
    return;
  }
  if ("oversize" in read) {
    throw new StowageError(
      "TOO_LARGE",
      `the configuration captured with the session adds up to more than ${walk.limit} bytes (maxBytes)`,
      { details: { limit: walk.limit } },
    );
  }
  walk.found.bytes += read.bytes.byteLength;
  const vetted = walk.layout.withoutSecrets(segments.at(-1)!, read.bytes);
  if ("refused" in vetted) {
    walk.found.skipped.push({ path, reason: vetted.refused });
    return;
  }
  for (const field of vetted.leftOut) walk.found.secretsLeftOut.push({ path, field });
  walk.found.sources.push({ path, bytes: vetted.bytes });
}

/** Every regular file below `root/segments…`, each directory held open while it is listed. */
async function takeDirectory(walk: Walk, segments: string[]): Promise<void> {
  throwIfAborted(walk.signal, "capture session configuration");
  let directory: OpenedDirectory | null;
  try {
    directory = openDirectoryBeneath(walk.root, [...walk.below, ...segments], { refuseNonDirectories: true });
  } catch (err) {
    if (StowageError.is(err, "FORBIDDEN") || StowageError.is(err, "CONFLICT")) {
      walk.found.skipped.push({
        path: `${walk.prefix}${segments.join("/")}`,
        reason: "symlink (not followed)",
      });
      return;
    }
    throw err;
  }
  if (!directory) return;
  let names: { name: string; directory: boolean; file: boolean }[];
  try {
    names = (
      await readdir(directory.path, { withFileTypes: true }).catch((err: unknown) => {
        if (errnoOf(err) === "ENOENT") return [];
        throw err;
      })
    ).map((entry) => ({ name: entry.name, directory: entry.isDirectory(), file: entry.isFile() }));
  } finally {
    directory.close();
  }
  for (const entry of names.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const path = `${walk.prefix}${[...segments, entry.name].join("/")}`;
    const problem = pathSegmentProblem(entry.name);
    const skippedBecause = walk.layout.skipped?.[[...segments, entry.name].join("/")];
    if (problem) walk.found.skipped.push({ path, reason: `unsafe name: ${problem}` });
    else if (skippedBecause) walk.found.skipped.push({ path, reason: skippedBecause });
    else if (SKIPPED_CONFIG_DIRECTORY_NAMES.has(entry.name)) {
      walk.found.skipped.push({
        path,
        reason: "a git clone or installed packages: fetched again, never captured",
      });
    } else if (entry.directory) await takeDirectory(walk, [...segments, entry.name]);
    // A link or anything else is refused when read, whatever it is when listed.
    else await takeFile(walk, [...segments, entry.name]);
  }
}

/**
 * The configuration of `layout` under `root` (the config directory or the working directory;
 * with `below`, that directory below it), as archive entries under `prefix`, read into memory within `limit` bytes: never through a
 * link, secrets left out (`withoutSecrets`).
 */
export async function collectConfiguration(
  root: string,
  layout: ConfigurationLayout,
  prefix: string,
  options: { limit: number; below?: readonly string[]; signal?: AbortSignal },
): Promise<CollectedConfiguration> {
  const found: CollectedConfiguration = { sources: [], skipped: [], secretsLeftOut: [], bytes: 0 };
  const walk: Walk = {
    root,
    below: options.below ?? [],
    layout,
    prefix,
    limit: options.limit,
    found,
    ...(options.signal ? { signal: options.signal } : {}),
  };
  for (const file of layout.files) await takeFile(walk, file.split("/"));
  for (const directory of layout.directories) await takeDirectory(walk, directory.split("/"));
  return found;
}
