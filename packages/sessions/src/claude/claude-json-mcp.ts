import { realpath } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { StowageError } from "@stowage/core";
import { openDirectoryBeneath, writeFileAtomic } from "@stowage/core/fs";
import { readSessionFile, type SkippedFile } from "../archive/collect-files.js";
import type { SecretLeftOut } from "../configuration/collect-configuration.js";
import { removeSecrets } from "../configuration/config-file-secrets.js";
import { existingBytes, type RestoredConfiguration } from "../configuration/restore-configuration.js";

/**
 * Claude Code keeps the user's MCP servers (`claude mcp add --scope user`: top-level
 * `mcpServers`) and the local ones of each project (`--scope local`: `projects[<cwd>].mcpServers`)
 * in `~/.claude.json`, beside the install's state, which is never captured. With `withConfig`
 * just those entries are, as this archive entry: `{ mcpServers, projects: { <cwd>: { mcpServers } } }`.
 */
export const CLAUDE_JSON_MCP_ENTRY = "~claude.json/mcpServers.json";

const FILE_NAME = ".claude.json";
/** How often a merge starts again when Claude Code rewrote the file while it was merging. */
const MERGE_ATTEMPTS = 3;

type Tree = Record<string, unknown>;
const isTree = (value: unknown): value is Tree =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The directory of the `.claude.json` that goes with `configDir`: Claude Code reads
 * `$CLAUDE_CONFIG_DIR/.claude.json` when that is set, else `~/.claude.json`, beside `~/.claude`.
 */
export function claudeJsonDirectory(configDir: string): string {
  return basename(configDir) === ".claude" ? dirname(configDir) : configDir;
}

function parseObject(bytes: Uint8Array): Tree | undefined {
  try {
    const parsed: unknown = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
    return isTree(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** The key of `cwd` in `projects`: as Claude Code wrote it (its real path), or as given. */
async function projectEntryKey(projects: Tree, cwd: string): Promise<string | undefined> {
  const candidates = [resolve(cwd), await realpath(cwd).catch(() => resolve(cwd))];
  return candidates.find((key) => isTree(projects[key]) && isTree((projects[key] as Tree).mcpServers));
}

/**
 * The user's and, with `cwd`, the project's local MCP servers from the `.claude.json` that goes
 * with `configDir`, their secrets (`env` entries with a secret's name, `headers`) left out. None
 * (no file, no servers) gives no source; a file that is not a JSON object, or a link, is skipped.
 */
export async function collectClaudeJsonMcpServers(
  configDir: string,
  cwd: string | undefined,
  limit: number,
  signal?: AbortSignal,
): Promise<{
  source?: { path: string; bytes: Uint8Array };
  skipped: SkippedFile[];
  secretsLeftOut: SecretLeftOut[];
}> {
  const path = CLAUDE_JSON_MCP_ENTRY;
  const read = await readSessionFile(
    { root: claudeJsonDirectory(configDir), segments: [FILE_NAME] },
    limit,
    signal,
  );
  if ("refused" in read) {
    const reason = read.refused === "symlink" ? "symlink (not followed)" : "not a regular file";
    return { skipped: read.refused === "missing" ? [] : [{ path, reason }], secretsLeftOut: [] };
  }
  if ("oversize" in read) {
    throw new StowageError(
      "TOO_LARGE",
      `${FILE_NAME} is larger than what maxBytes leaves for it (${limit} bytes)`,
      {
        details: { limit },
      },
    );
  }
  const state = parseObject(read.bytes);
  if (!state) return { skipped: [{ path, reason: `${FILE_NAME} is not a JSON object` }], secretsLeftOut: [] };
  const subset: Tree = {};
  if (isTree(state.mcpServers) && Object.keys(state.mcpServers).length > 0)
    subset.mcpServers = state.mcpServers;
  const projects = isTree(state.projects) ? state.projects : {};
  const key = cwd === undefined ? undefined : await projectEntryKey(projects, cwd);
  const local = key === undefined ? undefined : (projects[key] as Tree).mcpServers;
  if (key !== undefined && isTree(local) && Object.keys(local).length > 0) {
    subset.projects = { [key]: { mcpServers: local } };
  }
  if (Object.keys(subset).length === 0) return { skipped: [], secretsLeftOut: [] };
  const leftOut = removeSecrets(subset);
  if (leftOut === null) {
    return { skipped: [{ path, reason: "nested too deep to tell its secrets apart" }], secretsLeftOut: [] };
  }
  return {
    source: { path, bytes: new TextEncoder().encode(`${JSON.stringify(subset, null, 2)}\n`) },
    skipped: [],
    secretsLeftOut: leftOut.map((field) => ({ path, field })),
  };
}

/** The servers of an entry's map that are objects, by name; what is not is left out. */
function serversOf(value: unknown): [string, Tree][] {
  return isTree(value)
    ? Object.entries(value).filter((entry): entry is [string, Tree] => isTree(entry[1]))
    : [];
}

const sameBytes = (a: Uint8Array | null, b: Uint8Array | null) =>
  a === b || (a !== null && b !== null && Buffer.from(a).equals(Buffer.from(b)));

/**
 * Merges the MCP servers an archive holds (`bytes` of {@link CLAUDE_JSON_MCP_ENTRY}) into the
 * `.claude.json` that goes with `configDir`, touching nothing else in it: each user server, and
 * each local one under `projects[<cwd>]` (the working directory restored to, else the captured
 * one), is added where no server of its name is (`written`), else `kept`. Written atomically
 * (temp file, rename); when Claude Code rewrote the file meanwhile, the merge starts again from
 * its new bytes. A link there, or a file that is not a JSON object, is left alone (`skipped`).
 */
export async function mergeClaudeJsonMcpServers(
  bytes: Uint8Array,
  roots: { configDir: string; cwd: string | undefined },
  fsync: boolean,
  result: RestoredConfiguration,
): Promise<void> {
  const path = CLAUDE_JSON_MCP_ENTRY;
  const archived = parseObject(bytes);
  const [capturedKey, capturedProject] =
    Object.entries(isTree(archived?.projects) ? archived.projects : {})[0] ?? [];
  const places: { at: string[]; servers: [string, Tree][] }[] = [
    { at: ["mcpServers"], servers: serversOf(archived?.mcpServers) },
  ];
  const cwd = roots.cwd;
  // As Claude Code keys it: the working directory's real path.
  const projectKey = cwd === undefined ? capturedKey : await realpath(cwd).catch(() => resolve(cwd));
  if (projectKey !== undefined && isTree(capturedProject)) {
    places.push({
      at: ["projects", projectKey, "mcpServers"],
      servers: serversOf(capturedProject.mcpServers),
    });
  }
  if (!archived) {
    result.skipped.push({ path, reason: "not a JSON object (not what a capture writes)" });
    return;
  }
  // The home directory (or $CLAUDE_CONFIG_DIR), there once the session's files are.
  const directory = openDirectoryBeneath(claudeJsonDirectory(roots.configDir), []);
  if (!directory) {
    result.skipped.push({ path, reason: `${claudeJsonDirectory(roots.configDir)} does not exist` });
    return;
  }
  try {
    for (let attempt = 1; ; attempt++) {
      const before = await existingBytes(directory, FILE_NAME);
      if (before === "other") {
        result.skipped.push({
          path,
          reason: `${FILE_NAME} is a link or not a regular file (never followed)`,
        });
        return;
      }
      const state = before === null ? {} : parseObject(before);
      if (!state) {
        result.skipped.push({ path, reason: `${FILE_NAME} there is not a JSON object: left as it is` });
        return;
      }
      const written: string[] = [];
      const kept: string[] = [];
      for (const { at, servers } of places) {
        let map: Tree = state;
        for (const key of at) {
          if (!isTree(map[key])) map[key] = {};
          map = map[key] as Tree;
        }
        for (const [name, server] of servers) {
          const label = `${path}#${[...at, name].join(".")}`;
          if (Object.hasOwn(map, name)) kept.push(label);
          else {
            map[name] = server;
            written.push(label);
          }
        }
      }
      if (written.length > 0) {
        // Read again just before the rename: Claude Code rewrites the whole file as it runs.
        const now = await existingBytes(directory, FILE_NAME);
        if (now === "other" || !sameBytes(before, now)) {
          if (attempt < MERGE_ATTEMPTS) continue;
          result.skipped.push({
            path,
            reason: `${FILE_NAME} kept changing while it was merged: left as it is`,
          });
          return;
        }
        await writeFileAtomic(join(directory.path, FILE_NAME), `${JSON.stringify(state, null, 2)}\n`, {
          fsync,
        });
      }
      result.written.push(...written);
      result.kept.push(...kept);
      return;
    }
  } finally {
    directory.close();
  }
}
