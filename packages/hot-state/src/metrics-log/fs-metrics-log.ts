import { randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  fdatasync,
  fstatSync,
  openSync,
  readSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { promisify } from "node:util";
import {
  assertSafeId,
  consoleLogger,
  describeValue,
  errnoOf,
  fromSystemError,
  type Logger,
  type OperationOptions,
  StowageError,
  throwIfAborted,
} from "@stowage/core";
import { type OpenedDirectory, openDirectoryBeneath, symlinkRefused } from "@stowage/core/fs";
import {
  type PromptMetricsEntry,
  type PromptMetricsLog,
  type PromptMetricsSeriesOptions,
  parseEntry,
  placeEntry,
  promptMetricsSeriesWindow,
} from "./prompt-metrics-entry.js";
import { serialAppends } from "./serial-appends.js";

/** Options of `createFsPromptMetricsLog`. */
export interface FsPromptMetricsLogOptions {
  /** The directory the logs live under (made when missing); the caller's, so a link here is followed. */
  root: string;
  /** Directories below `root` holding the logs (a tenant's, e.g. `["user", "alice"]`), opened without following links. */
  segments?: readonly string[];
  /** Flush each appended line to the disk (`fdatasync`) before `append` resolves. Default true. */
  fsync?: boolean;
  /** Clock of `recorded_at`. Default `new Date()`. */
  now?: () => Date;
  /** Where damaged lines are reported. Default `consoleLogger`. */
  logger?: Logger;
}

/** Bytes read at once when a writer catches up with lines other processes appended. */
const READ_CHUNK_BYTES = 64 * 1024;
const NEWLINE = 0x0a;
// O_NONBLOCK: a FIFO planted at a log's name must not hang the open (it is refused right after).
const WRITE_FLAGS =
  constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const flush = promisify(fdatasync);

/** How far this process has read one session's file: whole lines up to `offset`. */
interface ReadPosition {
  /** Identity of the file read (a deleted and written-again log is another file). */
  file: string;
  /** Bytes read, always at the end of a line. */
  offset: number;
  /** Turns (non-empty lines) before `offset`. */
  turns: number;
}

/** The line as stored: the entry without its turn (the line's place gives it), and who appended it. */
interface StoredLine extends Omit<PromptMetricsEntry, "turn"> {
  append_id: string;
}

/**
 * A metrics log on the local file system: one JSON Lines file per session,
 * `<root>/<segments…>/<session>.jsonl`, appended to with `O_APPEND`, as `appendFile` would, so an
 * append writes one line and no new file. Turn n is the n-th non-empty line: a line is written
 * whole by one `write(2)`, which the kernel appends atomically among writers of other processes on
 * a local file system, and a writer then reads back from where it had read to find its own line
 * (by its `append_id`) and learn its turn. A line left unfinished by a crash ends at the next
 * append (which starts with a newline then) and is read as a damaged turn: logged and skipped.
 * Not for network file systems, where `O_APPEND` is not atomic.
 */
export function createFsPromptMetricsLog(options: FsPromptMetricsLogOptions): PromptMetricsLog {
  const {
    root,
    segments = [],
    fsync = true,
    now = () => new Date(),
    logger = consoleLogger,
  } = options ?? ({} as FsPromptMetricsLogOptions);
  if (typeof root !== "string" || root === "") {
    throw new StowageError(
      "INVALID_INPUT",
      `createFsPromptMetricsLog needs a root directory, got ${describeValue(root)}`,
    );
  }
  if (!Array.isArray(segments)) {
    throw new StowageError(
      "INVALID_INPUT",
      `segments must be a list of names, got ${describeValue(segments)}`,
    );
  }
  if (typeof fsync !== "boolean") {
    throw new StowageError("INVALID_INPUT", `fsync must be true or false, got ${describeValue(fsync)}`);
  }
  const writerId = randomBytes(6).toString("hex");
  let appended = 0;
  const positions = new Map<string, ReadPosition>();
  // Held open for the log's life: the segments are walked once, not per append. Opened again
  // when the directory was removed (a deleted tenant written again).
  let directory: OpenedDirectory | null = null;

  function directoryFor(create: boolean): OpenedDirectory | null {
    if (!directory) directory = openDirectoryBeneath(root, segments, { create });
    return directory;
  }

  function dropDirectory() {
    directory?.close();
    directory = null;
  }

  /** Opens a session's file, refusing anything but a regular file there; null when missing and not `create`. */
  function openLog(session: string, create: boolean): { fd: number; file: string; size: number } | null {
    for (let attempt = 0; ; attempt++) {
      const dir = directoryFor(create);
      if (!dir) return null;
      const path = `${dir.path}/${session}.jsonl`;
      let fd: number;
      try {
        fd = openSync(path, create ? WRITE_FLAGS : READ_FLAGS, 0o644);
      } catch (err) {
        const errno = errnoOf(err);
        // Named without the root: the message may reach a client.
        if (errno === "ELOOP") throw symlinkRefused(`${session}.jsonl`, { cause: err });
        // The directory itself is gone: open it again once.
        if (errno === "ENOENT" && attempt === 0 && create) {
          dropDirectory();
          continue;
        }
        if (errno === "ENOENT") return null;
        throw fromSystemError(err, `open the prompt metrics of session ${session}`);
      }
      const stats = fstatSync(fd);
      if (!stats.isFile()) {
        closeSync(fd);
        throw new StowageError(
          "FORBIDDEN",
          `the prompt metrics of session ${session} are not a regular file`,
          {
            reason: "NOT_A_REGULAR_FILE",
          },
        );
      }
      return { fd, file: `${stats.dev}:${stats.ino}:${stats.birthtimeMs}`, size: stats.size };
    }
  }

  /** Reads `[from, to)` of `fd`. */
  function readRange(fd: number, from: number, to: number): Buffer {
    const buffer = Buffer.allocUnsafe(to - from);
    let done = 0;
    while (done < buffer.length) {
      const read = readSync(fd, buffer, done, buffer.length - done, from + done);
      if (read === 0) break;
      done += read;
    }
    return buffer.subarray(0, done);
  }

  /**
   * Moves `position` over the whole lines in `[position.offset, size)`, counting turns, until
   * `stopAt` returns true for a line (that line is consumed too). Returns the turn of that line.
   */
  function advance(
    fd: number,
    position: ReadPosition,
    size: number,
    stopAt?: (line: Buffer) => boolean,
  ): number | null {
    let pending: Buffer = Buffer.alloc(0);
    let offset = position.offset;
    while (offset < size) {
      const chunk = readRange(fd, offset, Math.min(size, offset + READ_CHUNK_BYTES));
      if (chunk.length === 0) break;
      offset += chunk.length;
      const bytes = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      let start = 0;
      for (let end = bytes.indexOf(NEWLINE); end !== -1; end = bytes.indexOf(NEWLINE, start)) {
        const line = bytes.subarray(start, end);
        position.offset += end + 1 - start;
        if (line.length > 0) position.turns++;
        start = end + 1;
        if (line.length > 0 && stopAt?.(line)) return position.turns;
      }
      pending = bytes.subarray(start);
    }
    return null;
  }

  async function appendChecked(
    session: string,
    checked: PromptMetricsEntry,
    operation: OperationOptions,
  ): Promise<PromptMetricsEntry> {
    throwIfAborted(operation.signal, "append prompt metrics");
    const placed = placeEntry(checked, 1, now());
    const { turn: _turn, ...entry } = placed;
    const appendId = `${writerId}.${++appended}`;
    const stored: StoredLine = { ...entry, append_id: appendId };
    const json = JSON.stringify(stored);
    const opened = openLog(session, true)!;
    const { fd } = opened;
    try {
      let position = positions.get(session);
      // What this process knew is a hint: the file may have been deleted and written again.
      if (!position || position.file !== opened.file || position.offset > opened.size) {
        position = { file: opened.file, offset: 0, turns: 0 };
      }
      positions.set(session, position);
      advance(fd, position, opened.size);
      // Bytes after the last whole line are a line another writer is writing, or one a crash
      // cut short: start on a new line (an empty line is no turn).
      const line = encoder.encode(`${position.offset < opened.size ? "\n" : ""}${json}\n`);
      const written = writeSync(fd, line);
      if (written !== line.length) {
        throw new StowageError(
          "UNAVAILABLE",
          `appended ${written} of ${line.length} bytes to session ${session}'s metrics`,
        );
      }
      if (fsync) await flush(fd);
      // Our line is in the file now, after any lines of other writers that came first.
      const ours = Buffer.from(json);
      const turn = advance(fd, position, Number.MAX_SAFE_INTEGER, (candidate) => candidate.equals(ours));
      if (turn === null) {
        throw new StowageError(
          "UNAVAILABLE",
          `the line appended to session ${session}'s metrics was not found again`,
        );
      }
      return { ...placed, turn };
    } catch (err) {
      positions.delete(session); // read again from the start next time
      throw err;
    } finally {
      closeSync(fd);
    }
  }

  const append = serialAppends(now, appendChecked);

  async function series(
    sessionId: string,
    op: PromptMetricsSeriesOptions = {},
  ): Promise<PromptMetricsEntry[]> {
    assertSafeId(sessionId, "sessionId");
    const { afterTurn, limit } = promptMetricsSeriesWindow(op);
    throwIfAborted(op.signal, "read prompt metrics");
    const opened = openLog(sessionId, false);
    if (!opened) return [];
    let bytes: Buffer;
    try {
      bytes = readRange(opened.fd, 0, opened.size);
    } finally {
      closeSync(opened.fd);
    }
    const entries: PromptMetricsEntry[] = [];
    let turn = 0;
    let start = 0;
    // Only whole lines: bytes after the last newline are a line still being written.
    for (
      let end = bytes.indexOf(NEWLINE);
      end !== -1 && entries.length < limit;
      end = bytes.indexOf(NEWLINE, start)
    ) {
      const line = bytes.subarray(start, end);
      start = end + 1;
      if (line.length === 0) continue;
      turn++;
      if (turn <= afterTurn) continue; // before the window: counted, not parsed
      const entry = parseLine(decoder.decode(line), sessionId, turn);
      if (entry === null) {
        logger.warn(
          { turn },
          `prompt metrics of session ${sessionId}: turn ${turn} is damaged and was skipped`,
        );
      } else {
        entries.push(entry);
      }
    }
    return entries;
  }

  async function deleteSession(sessionId: string, op: OperationOptions = {}): Promise<void> {
    assertSafeId(sessionId, "sessionId");
    throwIfAborted(op.signal, "delete prompt metrics");
    const dir = directoryFor(false);
    if (!dir) return;
    try {
      // unlink never follows a link: one planted at the name is removed itself.
      unlinkSync(`${dir.path}/${sessionId}.jsonl`);
    } catch (err) {
      if (errnoOf(err) !== "ENOENT")
        throw fromSystemError(err, `delete the prompt metrics of session ${sessionId}`);
    }
    positions.delete(sessionId); // the next append writes a new file: read it from the start
  }

  return Object.freeze({ append, series, deleteSession });
}

function parseLine(text: string, session: string, turn: number): PromptMetricsEntry | null {
  try {
    const { append_id: _id, ...entry } = JSON.parse(text) as StoredLine;
    return parseEntry({ ...entry, turn }, session);
  } catch {
    return null;
  }
}
