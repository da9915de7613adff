import { join } from "node:path";
import { StowageError, throwIfAborted } from "@stowage/core";
import {
  describeAvailable,
  MAX_LISTED_IDS,
  noArtifactsDirectory,
  readDirectoryNames,
} from "../layout/listing.js";
import { assertArtifactId, parseArtifactFileName } from "../layout/names.js";
import { openRegularFile } from "../read/open-regular-file.js";
import { readLines, readWhole } from "../read/read-lines.js";
import { checkReadOptions, type LineRange, type ReadOptions } from "../read/read-options.js";

/** Listing and opening race a writer that renames `.partial` away: this many attempts, then UNAVAILABLE. */
const LOOKUP_ATTEMPTS = 3;

const decoder = new TextDecoder("utf-8");

export interface ArtifactReadOptions extends ReadOptions {
  /**
   * Return the output so far of an artifact still being written (`complete: false` in the
   * result) instead of failing with UNAVAILABLE (reason `ARTIFACT_INCOMPLETE`). Default false.
   */
  allowIncomplete?: boolean;
}

export interface ArtifactRead {
  id: string;
  toolType: string;
  /** False only for an artifact still being written, read with `allowIncomplete`. */
  complete: boolean;
  text: string;
  /** Set for a paged read (`offset`/`limit`). */
  lines?: LineRange;
}

export interface ArtifactEntry {
  id: string;
  toolType: string;
  /** False while the tool is still writing it (or its writer stopped before finishing). */
  complete: boolean;
  fileName: string;
}

/** The tool outputs in `dir`, by increasing id; empty when the directory does not exist. */
export async function listArtifactEntries(dir: string): Promise<ArtifactEntry[]> {
  const names = (await readDirectoryNames(dir, "list artifacts")) ?? [];
  return entriesIn(names);
}

function entriesIn(names: readonly string[]): ArtifactEntry[] {
  const entries: Array<ArtifactEntry & { n: number }> = [];
  for (const fileName of names) {
    const parsed = parseArtifactFileName(fileName);
    if (parsed)
      entries.push({
        id: String(parsed.id),
        n: parsed.id,
        toolType: parsed.toolType,
        complete: parsed.complete,
        fileName,
      });
  }
  entries.sort((a, b) => a.n - b.n || Number(b.complete) - Number(a.complete));
  return entries.map(({ n: _, ...entry }) => entry);
}

function notFound(id: string, entries: readonly ArtifactEntry[]): StowageError {
  const available = entries.filter((entry) => entry.complete).map((entry) => entry.id);
  const running = entries.filter((entry) => !entry.complete).map((entry) => entry.id);
  const runningNote = running.length > 0 ? `; still being written: ${describeAvailable(running)}` : "";
  return new StowageError(
    "NOT_FOUND",
    `artifact ${id} not found. Available ids: ${describeAvailable(available)}${runningNote}`,
    {
      reason: "ARTIFACT_NOT_FOUND",
      details: { id, available: available.slice(0, MAX_LISTED_IDS) },
    },
  );
}

/**
 * Reads `artifact://<id>` from `dir`: found by exact file name (`<id>.<toolType>.log`), never by
 * prefix; opened without following links. A page (`offset`/`limit`) is read by scanning lines,
 * never by loading the file.
 */
export async function readArtifact(
  dir: string,
  idValue: unknown,
  options: ArtifactReadOptions = {},
): Promise<ArtifactRead> {
  const id = assertArtifactId(idValue);
  const { page, maxBytes } = checkReadOptions(options);
  const what = `artifact ${id}`;
  for (let attempt = 0; attempt < LOOKUP_ATTEMPTS; attempt++) {
    throwIfAborted(options.signal, `read ${what}`);
    const names = await readDirectoryNames(dir, `read ${what}`);
    if (names === null) throw noArtifactsDirectory(dir);
    const entries = entriesIn(names);
    const matches = entries.filter((entry) => entry.id === id);
    const complete = matches.filter((entry) => entry.complete);
    if (complete.length > 1) {
      throw new StowageError(
        "CONFLICT",
        `${what} is ambiguous: ${complete.map((entry) => entry.fileName).join(", ")}`,
        {
          reason: "AMBIGUOUS_ARTIFACT",
        },
      );
    }
    const target = complete[0] ?? matches[0];
    if (!target) throw notFound(id, entries);
    if (!target.complete && options.allowIncomplete !== true) {
      throw new StowageError(
        "UNAVAILABLE",
        `${what} is still being written (its tool is running, or stopped before finishing); read it again once the tool is done, or pass allowIncomplete to see the output so far`,
        { reason: "ARTIFACT_INCOMPLETE", details: { id } },
      );
    }
    const handle = await openRegularFile(join(dir, target.fileName), what);
    if (!handle) continue; // renamed (published) or removed since the listing: look again
    try {
      const result: ArtifactRead = { id, toolType: target.toolType, complete: target.complete, text: "" };
      if (page) {
        const read = await readLines(handle, page, maxBytes, what, options.signal);
        result.text = decoder.decode(read.bytes);
        result.lines = read.lines;
      } else {
        result.text = decoder.decode(await readWhole(handle, maxBytes, what, options.signal));
      }
      return result;
    } finally {
      await handle.close().catch(() => {});
    }
  }
  throw new StowageError("UNAVAILABLE", `${what} kept changing while it was being opened; try again`, {
    reason: "ARTIFACT_CHANGING",
  });
}
