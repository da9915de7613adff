import { createHash, randomBytes } from "node:crypto";
import { mkdir, open, rm, utimes } from "node:fs/promises";
import { dirname, join } from "node:path";
import { describeValue, fromSystemError, StowageError, throwIfAborted } from "@stowage/core";
import { fsyncDirectory } from "@stowage/core/fs";
import { assertSessionId } from "../claude/session-id.js";
import { claudeSessionLocation } from "../claude/session-location.js";
import { decompressBounded } from "../codec/compress.js";
import { ChunkReader } from "./chunk-reader.js";
import { topLevelName } from "./entry-path.js";
import {
  ARCHIVE_PREAMBLE_BYTES,
  DEFAULT_MAX_SESSION_BYTES,
  parseManifest,
  readPreamble,
  type SessionArchiveEntry,
  type SessionArchiveManifest,
} from "./manifest.js";
import { assertPositiveInteger, assertSessionArchive, type SessionArchive } from "./session-archive.js";
import { withSessionLock } from "./session-lock.js";
import { removeStaleStaging, STAGING_PREFIX } from "./stale-staging.js";
import { swapIntoPlace } from "./swap-into-place.js";

export interface RestoreSessionOptions {
  /** Claude Code's config directory. Default: `$CLAUDE_CONFIG_DIR`, else `~/.claude`. */
  configDir?: string;
  /** Restore under the project key of this working directory. */
  cwd?: string;
  /** Restore under this project key. Default (no `cwd` either): the key recorded at capture. */
  projectKey?: string;
  /** Fail with TOO_LARGE when the archive decompresses to more. Default 256 MiB. */
  maxBytes?: number;
  /** Replace the session's files when they already exist (else CONFLICT). Default true. */
  overwrite?: boolean;
  /** fsync restored files and directories before returning. Default true. */
  fsync?: boolean;
  signal?: AbortSignal;
}

export interface RestoredSession {
  sessionId: string;
  projectKey: string;
  projectDir: string;
  transcriptPath: string;
  files: SessionArchiveEntry[];
  /** Top-level names (`<id>.jsonl`, `<id>`, `agent-….jsonl`) that replaced existing ones. */
  replaced: string[];
}

// Restored transcripts hold prompts, code and tool output: private to the owner.
const FILE_MODE = 0o600;

async function writeEntry(
  reader: ChunkReader,
  entry: SessionArchiveEntry,
  path: string,
  fsync: boolean,
  signal: AbortSignal | undefined,
): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const handle = await open(path, "wx", FILE_MODE);
  const hash = createHash("sha256");
  try {
    for await (const part of reader.readRange(entry.size, `file ${describeValue(entry.path)}`)) {
      throwIfAborted(signal, "restore session");
      hash.update(part);
      for (let offset = 0; offset < part.byteLength; ) {
        offset += (await handle.write(part, offset, part.byteLength - offset)).bytesWritten;
      }
    }
    if (fsync) await handle.sync();
  } finally {
    await handle.close();
  }
  const actual = hash.digest("hex");
  if (actual !== entry.sha256) {
    throw new StowageError(
      "INTEGRITY",
      `session archive entry ${describeValue(entry.path)} has sha256 ${actual}, but the manifest says ${entry.sha256}`,
      { reason: "SHA256_MISMATCH", details: { path: entry.path } },
    );
  }
  // Seconds as a number, not a Date: a Date would round the float and lose the millisecond.
  await utimes(path, entry.mtimeMs / 1000, entry.mtimeMs / 1000);
}

async function fsyncTree(root: string, files: readonly SessionArchiveEntry[]): Promise<void> {
  const directories = new Set<string>([root]);
  for (const { path } of files) {
    const segments = path.split("/");
    for (let i = 1; i < segments.length; i++) directories.add(join(root, ...segments.slice(0, i)));
  }
  for (const directory of directories) await fsyncDirectory(directory);
}

/**
 * Restores a captured session into Claude Code's project directory. Every entry path is checked
 * (no `..`, absolute path, backslash, NUL, nor another session's file) before anything is written;
 * decompression is streamed and counted, so a bomb fails with TOO_LARGE early; every file's
 * sha256 is verified. Files are written into a temp directory inside the project directory and
 * renamed into place only once all are verified: a failed restore leaves the directory as it was.
 */
export async function restoreSession(
  archive: SessionArchive,
  options: RestoreSessionOptions = {},
): Promise<RestoredSession> {
  assertSessionArchive(archive, Number.MAX_SAFE_INTEGER);
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_SESSION_BYTES;
  assertPositiveInteger(maxBytes, "maxBytes");
  const { signal } = options;
  const fsync = options.fsync ?? true;
  const context = `restore session ${archive.sessionId}`;
  if (options.cwd !== undefined && options.projectKey !== undefined) {
    throw new StowageError("INVALID_INPUT", "give at most one of cwd or projectKey to restore a session");
  }
  if (archive.rawSizeBytes > maxBytes) {
    throw new StowageError(
      "TOO_LARGE",
      `session archive is ${archive.rawSizeBytes} bytes decompressed, over the limit of ${maxBytes} bytes (maxBytes)`,
      { reason: "DECOMPRESSED_TOO_LARGE", details: { limit: maxBytes, declared: archive.rawSizeBytes } },
    );
  }
  const reader = new ChunkReader(
    decompressBounded(archive.blob, archive.codec, { maxBytes, ...(signal ? { signal } : {}) }),
  );
  let createdDir: string | undefined;
  let staging: string | undefined;
  let succeeded = false;
  try {
    const manifestLength = readPreamble(await reader.readExactly(ARCHIVE_PREAMBLE_BYTES, "the preamble"));
    const manifest: SessionArchiveManifest = parseManifest(
      await reader.readExactly(manifestLength, "the manifest"),
      maxBytes,
    );
    if (manifest.sessionId !== archive.sessionId) {
      throw new StowageError(
        "INVALID_INPUT",
        `session archive holds session ${manifest.sessionId}, but it was labelled ${archive.sessionId}`,
        { reason: "SESSION_MISMATCH" },
      );
    }
    assertSessionId(manifest.sessionId);
    const location = await claudeSessionLocation({
      sessionId: manifest.sessionId,
      ...(options.configDir === undefined ? {} : { configDir: options.configDir }),
      ...(options.cwd === undefined
        ? { projectKey: options.projectKey ?? manifest.projectKey }
        : { cwd: options.cwd }),
    });
    createdDir = await mkdir(location.projectDir, { recursive: true });
    await removeStaleStaging(location.projectDir);
    staging = join(location.projectDir, `${STAGING_PREFIX}${randomBytes(8).toString("hex")}`);
    const stagedDir = join(staging, "new");
    const asideDir = join(staging, "old");
    await mkdir(stagedDir, { recursive: true });
    await mkdir(asideDir);

    for (const entry of manifest.files) {
      await writeEntry(reader, entry, join(stagedDir, ...entry.path.split("/")), fsync, signal);
    }
    if (!(await reader.atEnd())) {
      throw new StowageError("INTEGRITY", "session archive has bytes after its last file", {
        reason: "TRAILING_BYTES",
      });
    }
    const total =
      ARCHIVE_PREAMBLE_BYTES + manifestLength + manifest.files.reduce((sum, entry) => sum + entry.size, 0);
    if (total !== archive.rawSizeBytes) {
      throw new StowageError(
        "INTEGRITY",
        `session archive decompressed to ${total} bytes, but it was recorded as ${archive.rawSizeBytes}`,
        { reason: "RAW_SIZE_MISMATCH" },
      );
    }
    if (fsync) await fsyncTree(stagedDir, manifest.files);
    throwIfAborted(signal, context);
    const names = [...new Set(manifest.files.map((entry) => topLevelName(entry.path)))];
    const replaced = await withSessionLock(
      location.projectDir,
      location.sessionId,
      () =>
        swapIntoPlace({
          targetDir: location.projectDir,
          stagedDir,
          asideDir,
          names,
          overwrite: options.overwrite ?? true,
        }),
      signal,
    );
    if (fsync) await fsyncDirectory(location.projectDir);
    succeeded = true;
    return {
      sessionId: location.sessionId,
      projectKey: location.projectKey,
      projectDir: location.projectDir,
      transcriptPath: location.transcriptPath,
      files: manifest.files,
      replaced,
    };
  } catch (err) {
    throw fromSystemError(err, context);
  } finally {
    await reader.close().catch(() => {});
    if (staging) await rm(staging, { recursive: true, force: true }).catch(() => {});
    // Directories this call created (config dir, projects/, the project) go too on failure.
    if (!succeeded && createdDir) await rm(createdDir, { recursive: true, force: true }).catch(() => {});
  }
}
