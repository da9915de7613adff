import type { Dirent } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { errnoOf, isSessionId, StowageError, throwIfAborted } from "@stowage/core";
import { openFileBeneath } from "@stowage/core/fs";
import type { SessionFile } from "../archive/collect-files.js";
import type { CodexRolloutLocation } from "./rollout-location.js";
import {
  codexRolloutPathProblem,
  MONTH_OR_DAY_PATTERN,
  sessionIdOfRolloutName,
  YEAR_PATTERN,
} from "./rollout-path.js";

/**
 * Bytes read from a rollout's start to find its first line, the `session_meta`: it carries the
 * base instructions (tens of KB), so more than a Claude Code line needs.
 */
export const ROLLOUT_META_PROBE_BYTES = 1024 * 1024;

/**
 * The session a rollout belongs to: `payload.session_id` of its first line, a `session_meta`
 * (Codex 0.169 writes a subagent's own thread with its parent's session id there, and its own id
 * in `payload.id` and its file name). Undefined when the first line is not such a line.
 */
export function rolloutSessionOf(head: Uint8Array): string | undefined {
  let end = head.indexOf(0x0a);
  if (end === -1) {
    if (head.byteLength >= ROLLOUT_META_PROBE_BYTES) return undefined;
    end = head.byteLength;
  }
  let line: unknown;
  try {
    line = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(head.subarray(0, end)));
  } catch {
    return undefined;
  }
  const record = line as { type?: unknown; payload?: { session_id?: unknown } } | null;
  if (record?.type !== "session_meta") return undefined;
  const owner = record.payload?.session_id;
  return typeof owner === "string" && isSessionId(owner) ? owner : undefined;
}

/** The session the rollout at `codexHome/segments…` names, read without following a link. */
export async function rolloutOwner(root: string, segments: string[]): Promise<string | undefined> {
  let opened: Awaited<ReturnType<typeof openFileBeneath>>;
  try {
    opened = await openFileBeneath(root, segments);
  } catch (err) {
    if (StowageError.is(err, "FORBIDDEN")) return undefined;
    throw err;
  }
  if (!opened) return undefined;
  try {
    const buffer = new Uint8Array(Math.min(ROLLOUT_META_PROBE_BYTES, opened.stats.size));
    const { bytesRead } = await opened.handle.read(buffer, 0, buffer.byteLength, 0);
    return rolloutSessionOf(buffer.subarray(0, bytesRead));
  } finally {
    await opened.handle.close();
  }
}

async function names(path: string, directories: boolean): Promise<Dirent[]> {
  try {
    const entries = await readdir(path, { withFileTypes: true });
    return entries.filter((entry) => (directories ? entry.isDirectory() : true));
  } catch (err) {
    if (errnoOf(err) === "ENOENT" || errnoOf(err) === "ENOTDIR") return [];
    throw err;
  }
}

/**
 * The rollouts of the session's subagents (`spawn_agent`): each its own thread, in its own
 * rollout file named by its own id, whose `session_meta` names this session. They are looked for
 * in the day folders from the session's own day on (a subagent starts after its session); a link
 * is never followed, and a rollout whose first line names another session, or none, is not taken.
 */
export async function collectSubagentRollouts(
  location: CodexRolloutLocation,
  signal?: AbortSignal,
): Promise<SessionFile[]> {
  const files: SessionFile[] = [];
  const first = location.relativePath.split("/").slice(0, 3).join("/");
  const { sessionsDir, codexHome, sessionId } = location;
  for (const year of await names(sessionsDir, true)) {
    if (!YEAR_PATTERN.test(year.name)) continue;
    for (const month of await names(join(sessionsDir, year.name), true)) {
      if (!MONTH_OR_DAY_PATTERN.test(month.name)) continue;
      for (const day of await names(join(sessionsDir, year.name, month.name), true)) {
        const folder = `${year.name}/${month.name}/${day.name}`;
        if (!MONTH_OR_DAY_PATTERN.test(day.name) || folder < first) continue;
        throwIfAborted(signal, `find Codex session ${sessionId}'s subagents`);
        for (const entry of (await names(join(sessionsDir, folder), false)).sort((a, b) =>
          a.name < b.name ? -1 : 1,
        )) {
          const id = sessionIdOfRolloutName(entry.name);
          const path = `${folder}/${entry.name}`;
          if (id === undefined || id === sessionId || !isSessionId(id) || codexRolloutPathProblem(path, id))
            continue;
          const segments = ["sessions", ...path.split("/")];
          // A link or anything else is never read: whose it is cannot be told without following it.
          if (!entry.isFile() || (await rolloutOwner(codexHome, segments)) !== sessionId) continue;
          files.push({ path, absolute: join(sessionsDir, path), root: codexHome, segments });
        }
      }
    }
  }
  return files;
}
