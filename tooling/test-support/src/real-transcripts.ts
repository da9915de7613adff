import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { inCi } from "./environment.js";

/**
 * Session files real agents wrote (Claude Code, Codex, pi), kept beside the clone in
 * `../shared/real-transcripts` as CI has them, and never copied into the repository.
 * `STOWAGE_REAL_TRANSCRIPTS_DIR` names another place: CI sets it to one that does not exist to
 * check that the suites reading them skip, as in a clone with nothing beside it (`.ci/run`).
 */
export const REAL_TRANSCRIPTS_DIR =
  process.env.STOWAGE_REAL_TRANSCRIPTS_DIR ??
  fileURLToPath(new URL("../../../../shared/real-transcripts/", import.meta.url));

/** A record of a real file, read field by field in tests. */
// biome-ignore lint/suspicious/noExplicitAny: real records of three formats, read field by field
export type RealRecord = Record<string, any>;

/** The real transcripts as one suite reads them; with `present` false, `files` is empty. */
export interface RealTranscripts {
  /** Whether the directory is there; a suite without it skips (`describe.skipIf(!real.present)`). */
  readonly present: boolean;
  /** The `.jsonl` files below `subdir` (default: all), as paths relative to the directory, sorted. */
  files(subdir?: string): string[];
  /** A file's text (`file` as `files` gives it). */
  read(file: string): string;
  /** A file's records, parsed line by line here, independently of the code under test. */
  records(file: string): RealRecord[];
}

function jsonlFilesUnder(path: string): string[] {
  return readdirSync(path).flatMap((name) => {
    const child = join(path, name);
    return statSync(child).isDirectory() ? jsonlFilesUnder(child) : name.endsWith(".jsonl") ? [child] : [];
  });
}

/**
 * Finds the real transcripts for `suite` (named in what is printed). Missing, the suite skips
 * with the reason printed, except in CI, where this throws: there they must be present.
 */
export function realTranscripts(suite: string): RealTranscripts {
  const present = existsSync(REAL_TRANSCRIPTS_DIR);
  if (!present) {
    const reason = `real transcripts not found at ${REAL_TRANSCRIPTS_DIR} (CI has shared/ beside the clone)`;
    if (inCi) throw new Error(`${suite}: ${reason}; in CI they must be there`);
    console.warn(`[stowage] ${suite} skipped: ${reason}`);
  }
  const read = (file: string) => readFileSync(join(REAL_TRANSCRIPTS_DIR, file), "utf8");
  return {
    present,
    files: (subdir = "") =>
      present
        ? jsonlFilesUnder(join(REAL_TRANSCRIPTS_DIR, subdir))
            .map((path) => relative(REAL_TRANSCRIPTS_DIR, path))
            .sort()
        : [],
    read,
    records: (file) =>
      read(file)
        .split("\n")
        .filter((line) => line.trim() !== "")
        .map((line) => JSON.parse(line) as RealRecord),
  };
}
