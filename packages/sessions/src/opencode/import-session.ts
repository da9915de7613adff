import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { StowageError } from "@stowage/core";
import { DEFAULT_MAX_SESSION_BYTES } from "../archive/manifest.js";
import { SESSION_LOCK_PREFIX, withSessionLock } from "../archive/session-lock.js";
import { readOpencodeExport } from "./export-json.js";
import { DEFAULT_OPENCODE_TIMEOUT_MS, type OpencodeCliOptions, runOpencode } from "./opencode-cli.js";
import { opencodeRowOwners } from "./opencode-rows.js";

// The export holds prompts, code and tool output: private to the owner while the CLI reads it.
const FILE_MODE = 0o600;
/** How many ids of another session an error names (in `details.ids`). */
const MAX_IDS_SHOWN = 10;

/**
 * OpenCode's data directory as the CLI will find it (`$XDG_DATA_HOME/opencode`, else
 * `$HOME/.local/share/opencode`, from the environment `env` the CLI gets). Restores of one session
 * hold their lock there, so two of them against the same database take turns.
 */
function opencodeDataDir(cli: OpencodeCliOptions, env: NodeJS.ProcessEnv): string {
  const base = env.XDG_DATA_HOME ? env.XDG_DATA_HOME : join(env.HOME || homedir(), ".local", "share");
  return resolve(cli.cwd ?? ".", base, "opencode");
}

/**
 * Whether OpenCode has no data at all where the CLI will look: `OPENCODE_DB` unset in `env` (it
 * can name a database elsewhere) and the data directory `dataDir` holding nothing but restore
 * locks and empty directories, as in a new container (`opencode --version`, which the stowage CLI
 * runs before a restore, leaves an empty `log` and `repos` there). Then no row can exist and the
 * `opencode db` check is skipped: a start of the CLI (about a second of CPU) less per restore.
 * Asked while holding the session's lock: a restore of the same session that went first has left
 * a database by then. A data directory holding anything else (a database, or the JSON files of an
 * OpenCode before 1.2, which the next run moves into one) is asked about as always.
 */
async function noOpencodeData(env: NodeJS.ProcessEnv, dataDir: string): Promise<boolean> {
  if (env.OPENCODE_DB) return false;
  for (const entry of await readdir(dataDir, { withFileTypes: true })) {
    if (entry.name.startsWith(SESSION_LOCK_PREFIX)) continue;
    if (!entry.isDirectory() || (await readdir(join(dataDir, entry.name))).length > 0) return false;
  }
  return true;
}

/** `opencode import <file>`; the CLI exits 0 even when it could not read the file, so its report is checked. */
async function importFile(cli: OpencodeCliOptions, file: string, sessionId: string, signal?: AbortSignal) {
  const stdout = await runOpencode(cli, ["import", file], {
    maxOutputBytes: 1024 * 1024,
    ...(signal ? { signal } : {}),
  });
  const said = stdout.toString("utf8").trim();
  if (!said.includes(`Imported session: ${sessionId}`)) {
    throw new StowageError(
      "UNAVAILABLE",
      `opencode import did not import session ${sessionId}: ${said.slice(-300)}`,
      {
        reason: "OPENCODE_CLI_FAILED",
      },
    );
  }
}

export interface ImportOpencodeSessionOptions {
  cli: OpencodeCliOptions;
  sessionId: string;
  /** What `opencode export` printed, as captured. */
  exported: Uint8Array;
  /** Replace a session of this id already in the database (else CONFLICT). */
  overwrite: boolean;
  /** How the export is named in errors and `details` (the archive entry's path). */
  entryPath: string;
  signal?: AbortSignal;
}

/**
 * Puts a captured OpenCode session into the database of the CLI's environment with
 * `opencode import`, touching no other session. The export is checked first
 * (`readOpencodeExport`); then, through `opencode db` (unless OpenCode has no data yet), a message
 * or part id that already belongs to another session is refused (INVALID_INPUT, `FOREIGN_ENTRY`:
 * `opencode import` keeps an existing row and files parts under the message they name, so
 * importing it would change that session). A session of this id already there is CONFLICT
 * without `overwrite`; with it, it is exported aside, deleted (`opencode session delete`) and
 * replaced by the import, which otherwise would keep every existing row. Should that import fail,
 * the copy set aside is put back. Returns whether a session was replaced.
 */
export async function importOpencodeSession(options: ImportOpencodeSessionOptions): Promise<boolean> {
  const { cli, sessionId, exported, overwrite, entryPath, signal } = options;
  const ids = readOpencodeExport(exported, sessionId);
  const env = { ...process.env, ...cli.env };
  const lockDir = opencodeDataDir(cli, env);
  await mkdir(lockDir, { recursive: true });
  // A private directory of our own for the files the CLI reads; removed whatever happens.
  const scratch = await mkdtemp(join(tmpdir(), "stowage-opencode-"));
  try {
    const file = join(scratch, entryPath);
    await writeFile(file, exported, { mode: FILE_MODE, flag: "wx" });
    return await withSessionLock(
      lockDir,
      sessionId,
      async () => {
        const { sessionExists, existing } = (await noOpencodeData(env, lockDir))
          ? { sessionExists: false, existing: [] }
          : await opencodeRowOwners(cli, sessionId, ids, signal);
        const foreign = existing.filter((row) => row.sessionId !== sessionId);
        if (foreign.length > 0) {
          throw new StowageError(
            "INVALID_INPUT",
            `OpenCode export of session ${sessionId} holds ${foreign.length} message or part id(s) of other sessions (${foreign[0]!.table} ${foreign[0]!.id} is session ${foreign[0]!.sessionId}'s); importing it would change them`,
            {
              reason: "FOREIGN_ENTRY",
              details: { path: entryPath, ids: foreign.slice(0, MAX_IDS_SHOWN).map((row) => row.id) },
            },
          );
        }
        if (!sessionExists) {
          await importFile(cli, file, sessionId, signal);
          return false;
        }
        if (!overwrite) {
          throw new StowageError(
            "CONFLICT",
            `OpenCode already holds session ${sessionId}; pass overwrite: true to replace it`,
            { details: { existing: [entryPath] } },
          );
        }
        const previous = join(scratch, "previous.json");
        const run = { maxOutputBytes: DEFAULT_MAX_SESSION_BYTES, ...(signal ? { signal } : {}) };
        await writeFile(previous, await runOpencode(cli, ["export", sessionId], run), { mode: FILE_MODE });
        await runOpencode(cli, ["session", "delete", sessionId], run);
        try {
          await importFile(cli, file, sessionId, signal);
        } catch (err) {
          // Without the signal: the copy set aside goes back even when the caller gave up.
          await runOpencode(cli, ["session", "delete", sessionId], { maxOutputBytes: 1024 * 1024 }).catch(
            () => {},
          );
          await importFile(cli, previous, sessionId).catch(() => {});
          throw err;
        }
        return true;
      },
      signal,
      // Another restore of the session runs the CLI up to five times, each bounded by its timeout.
      5 * (cli.timeoutMs ?? DEFAULT_OPENCODE_TIMEOUT_MS),
    );
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
