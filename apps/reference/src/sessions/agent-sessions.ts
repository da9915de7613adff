import { readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  type ArtifactStore,
  createArtifactStore,
  createInternalUrlRouter,
  type InternalUrlRouter,
} from "@stowage/artifacts";
import { describeValue, StowageError } from "@stowage/core";
import { ensureDirectory } from "@stowage/core/fs";

/** Agent session ids this app accepts: letters, digits and dashes (UUIDs and the like). */
export const AGENT_SESSION_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9-]{0,127}$/;

export interface AgentSession {
  sessionId: string;
  /** `<dir>/<timestamp>_<sessionId>.jsonl`; its artifacts are in the directory of the same name. */
  sessionFile: string;
  startedAt: string;
  artifacts: ArtifactStore;
  router: InternalUrlRouter;
}

function assertAgentSessionId(sessionId: unknown): asserts sessionId is string {
  if (typeof sessionId !== "string" || !AGENT_SESSION_ID_PATTERN.test(sessionId)) {
    throw new StowageError(
      "INVALID_INPUT",
      `session id must be 1-128 letters, digits and dashes, got ${describeValue(sessionId)}`,
    );
  }
}

/**
 * The agent sessions kept under one directory, as a coding agent lays them out:
 * `<timestamp>_<sessionId>.jsonl` beside the directory of its artifacts.
 */
export function createAgentSessions(dir: string) {
  const open = (sessionFile: string, sessionId: string, startedAt: string): AgentSession => {
    const artifacts = createArtifactStore({ sessionFile });
    return { sessionId, sessionFile, startedAt, artifacts, router: createInternalUrlRouter(artifacts) };
  };

  async function list(): Promise<{ sessionId: string; startedAt: string; sessionFile: string }[]> {
    const names = await readdir(dir).catch(() => [] as string[]);
    return names
      .filter((name) => name.endsWith(".jsonl"))
      .map((name) => {
        const stem = name.slice(0, -".jsonl".length);
        const cut = stem.indexOf("_");
        return {
          sessionId: stem.slice(cut + 1),
          startedAt: stem.slice(0, cut),
          sessionFile: join(dir, name),
        };
      })
      .filter((session) => AGENT_SESSION_ID_PATTERN.test(session.sessionId))
      .sort((a, b) => b.startedAt.localeCompare(a.startedAt));
  }

  return {
    dir,
    list,
    /** Starts a new session file (empty) and returns its artifacts. */
    async create(sessionId: string, startedAt = new Date()): Promise<AgentSession> {
      assertAgentSessionId(sessionId);
      if ((await list()).some((session) => session.sessionId === sessionId)) {
        throw new StowageError("ALREADY_EXISTS", `agent session ${sessionId} already exists`);
      }
      await ensureDirectory(dir);
      const stamp = startedAt.toISOString().replace(/[:.]/g, "-");
      const sessionFile = join(dir, `${stamp}_${sessionId}.jsonl`);
      await writeFile(sessionFile, "", { flag: "wx" });
      return open(sessionFile, sessionId, stamp);
    },
    /** The session with this id; NOT_FOUND when there is none. */
    async get(sessionId: string): Promise<AgentSession> {
      assertAgentSessionId(sessionId);
      const found = (await list()).find((session) => session.sessionId === sessionId);
      if (!found) throw new StowageError("NOT_FOUND", `no agent session ${sessionId}`);
      return open(found.sessionFile, found.sessionId, found.startedAt);
    },
  };
}

export type AgentSessions = ReturnType<typeof createAgentSessions>;
