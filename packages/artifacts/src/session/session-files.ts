import { open, rm } from "node:fs/promises";
import { basename, join } from "node:path";
import {
  assertSessionId,
  consoleLogger,
  describeValue,
  errnoOf,
  fromSystemError,
  type Logger,
  pathSegmentProblem,
  StowageError,
  throwIfAborted,
} from "@stowage/core";
import { fsyncDirectory, removeTreeBeneath } from "@stowage/core/fs";
import { directoryAccessBeneath } from "../layout/directory-access.js";
import { readDirectoryEntries } from "../layout/listing.js";
import { artifactsDirFor } from "../layout/session-dir.js";
import {
  formatSessionFileName,
  parseSessionFileName,
  sessionTimestamp,
} from "../layout/session-file-name.js";
import { type ArtifactStore, DEFAULT_FSYNC, openArtifactStore } from "../store/artifact-store.js";
import { createInternalUrlRouter, type InternalUrlRouter } from "../urls/router.js";
import { checkDirectoryPath } from "./paths.js";

/** Options of `createSessionFiles`. */
export interface SessionFilesOptions {
  /**
   * The directory holding `<timestamp>_<sessionId>.jsonl` files (created on the first `create`),
   * or, with `segments`, the root below which that directory is.
   */
  dir: string;
  /**
   * Directory names below `dir` leading to the sessions (a server keeps each user's under
   * `<root>/<kind>/<id>`: `segments: [kind, id]`). Each is opened without following a symbolic
   * link, as are the sessions' artifacts directories: a link planted there is FORBIDDEN (reason
   * `SYMLINK_REFUSED`; `ARTIFACTS_DIR_IS_LINK` for an artifacts directory), never a way out of
   * `dir`. `dir` itself is the caller's and may be a link. Default none: the sessions are in `dir`.
   */
  segments?: readonly string[];
  /** fsync a new session file and its directory entry, and every artifact (see `createArtifactStore`). Default false. */
  fsync?: boolean;
  /** Receives the artifact stores' warnings. Default `consoleLogger`. */
  logger?: Logger;
}

/** A session found in the directory. */
export interface ListedSession {
  sessionId: string;
  /** The timestamp part of the file name (`2026-01-01T10-00-00-000Z` for the sessions `create` makes). */
  startedAt: string;
  /** `<dir>/<startedAt>_<sessionId>.jsonl` (absolute); its artifacts are in the directory of the same name. */
  sessionFile: string;
}

/** A session with its artifacts opened. */
export interface OpenedSession extends ListedSession {
  artifacts: ArtifactStore;
  /** Reads `artifact://` and `agent://` URLs of this session. */
  router: InternalUrlRouter;
}

/** The agent sessions kept under one directory, as a coding agent lays them out. */
export interface SessionFiles {
  /** The directory (absolute). */
  readonly dir: string;
  /** Every session, newest first (then by id); other files and directories are ignored. */
  list(options?: { signal?: AbortSignal }): Promise<ListedSession[]>;
  /**
   * Starts a session: creates its empty session file, create-only. ALREADY_EXISTS (reason
   * `SESSION_EXISTS`) when a session with this id is already there.
   */
  create(sessionId: string, startedAt?: Date): Promise<OpenedSession>;
  /** The session with this id (the newest, should there be several); NOT_FOUND (reason `SESSION_NOT_FOUND`) when there is none. */
  get(sessionId: string, options?: { signal?: AbortSignal }): Promise<OpenedSession>;
  /**
   * Removes every session file with this id and its artifacts directory (artifacts first, so that
   * a failure half-way leaves a session, never orphaned artifacts); links in their place are
   * removed, never followed. False when there was none.
   */
  delete(sessionId: string, options?: { signal?: AbortSignal }): Promise<boolean>;
}

/**
 * The sessions under `dir`: `<timestamp>_<sessionId>.jsonl` beside the directory of its
 * artifacts. Session ids are core's safe ids, not ending in `.jsonl`. Creating two sessions with
 * one id is refused within a process; across processes, give sessions unique ids (UUIDs).
 */
export function createSessionFiles(options: SessionFilesOptions): SessionFiles {
  if (typeof options !== "object" || options === null) {
    throw new StowageError(
      "INVALID_INPUT",
      `createSessionFiles options must be an object, got ${describeValue(options)}`,
    );
  }
  const root = checkDirectoryPath(options.dir, "createSessionFiles dir");
  const segments = checkSegments(options.segments);
  const sessions = directoryAccessBeneath(root, segments, "SYMLINK_REFUSED");
  const { dir } = sessions;
  const { fsync = DEFAULT_FSYNC, logger = consoleLogger } = options;
  if (typeof fsync !== "boolean") {
    throw new StowageError("INVALID_INPUT", `fsync must be a boolean, got ${describeValue(fsync)}`);
  }
  if (typeof logger?.warn !== "function") {
    throw new StowageError("INVALID_INPUT", `logger must have a warn method, got ${describeValue(logger)}`);
  }
  // Creations run one after another, so that the check for an existing id and the create agree.
  let creating: Promise<unknown> = Promise.resolve();

  const openSession = (listed: ListedSession): OpenedSession => {
    // The artifacts directory beside the session file, reached from the root like the sessions.
    const artifactsDir = basename(artifactsDirFor(listed.sessionFile));
    const artifacts = openArtifactStore(directoryAccessBeneath(root, [...segments, artifactsDir]), {
      fsync,
      logger,
    });
    return { ...listed, artifacts, router: createInternalUrlRouter({ artifacts }) };
  };

  async function list(listOptions: { signal?: AbortSignal } = {}): Promise<ListedSession[]> {
    throwIfAborted(listOptions.signal, "list sessions");
    const found: ListedSession[] = [];
    const entries = await sessions.use(false, (path) => readDirectoryEntries(path, "list sessions"));
    for (const entry of entries ?? []) {
      const parsed = entry.isFile() ? parseSessionFileName(entry.name) : undefined;
      if (parsed) found.push({ ...parsed, sessionFile: join(dir, entry.name) });
    }
    return found.sort((a, b) =>
      a.startedAt === b.startedAt ? compare(a.sessionId, b.sessionId) : compare(b.startedAt, a.startedAt),
    );
  }

  async function find(sessionId: string, signal?: AbortSignal): Promise<ListedSession | undefined> {
    return (await list(signal ? { signal } : {})).find((session) => session.sessionId === sessionId);
  }

  async function createFile(sessionId: string, startedAt: string): Promise<OpenedSession> {
    if (await find(sessionId)) throw sessionExists(sessionId);
    const name = formatSessionFileName({ startedAt, sessionId });
    await sessions.use(true, async (path) => {
      try {
        // `wx` never follows a link at the name: one planted there is EEXIST.
        const handle = await open(`${path}/${name}`, "wx", 0o644);
        try {
          if (fsync) await handle.sync();
        } finally {
          await handle.close();
        }
        if (fsync) await fsyncDirectory(path);
      } catch (err) {
        if (errnoOf(err) === "EEXIST") throw sessionExists(sessionId, err);
        throw fromSystemError(err, `create session file ${name}`);
      }
    });
    return openSession({ sessionId, startedAt, sessionFile: join(dir, name) });
  }

  return {
    dir,
    list,
    async create(sessionId, startedAt = new Date()) {
      assertSessionId(sessionId);
      const stamp = sessionTimestamp(startedAt);
      const created = creating.then(() => createFile(sessionId, stamp));
      creating = created.catch(() => {});
      return created;
    },
    async get(sessionId, getOptions = {}) {
      assertSessionId(sessionId);
      const found = await find(sessionId, getOptions.signal);
      if (!found) {
        // The directory is not named: this message travels to clients of a server.
        throw new StowageError("NOT_FOUND", `no session ${sessionId}`, {
          reason: "SESSION_NOT_FOUND",
        });
      }
      return openSession(found);
    },
    async delete(sessionId, deleteOptions = {}) {
      assertSessionId(sessionId);
      const { signal } = deleteOptions;
      const removal = creating.then(async () => {
        const found = (await list(signal ? { signal } : {})).filter((s) => s.sessionId === sessionId);
        if (found.length === 0) return false;
        await sessions.use(false, async (path, directory) => {
          for (const session of found) {
            const name = basename(session.sessionFile);
            try {
              // Neither follows a link: one planted at either name, or swapped for a directory
              // inside the artifacts while they are removed, is removed itself.
              await removeTreeBeneath(directory, basename(artifactsDirFor(session.sessionFile)));
              await rm(`${path}/${name}`, { force: true });
            } catch (err) {
              throw fromSystemError(err, `delete session ${sessionId}`);
            }
          }
        });
        return true;
      });
      // Deletions and creations take turns, so that a create never meets a half-deleted session.
      creating = removal.catch(() => {});
      return removal;
    },
  };
}

function checkSegments(value: unknown): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.some((segment) => pathSegmentProblem(segment) !== undefined)) {
    throw new StowageError(
      "INVALID_INPUT",
      `createSessionFiles segments must be an array of single directory names (no "/", "..", "." or NUL), got ${describeValue(value)}`,
    );
  }
  return [...value];
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function sessionExists(sessionId: string, cause?: unknown): StowageError {
  return new StowageError("ALREADY_EXISTS", `a session ${sessionId} already exists`, {
    reason: "SESSION_EXISTS",
    ...(cause === undefined ? {} : { cause }),
  });
}
