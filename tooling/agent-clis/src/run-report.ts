import { readFile, stat } from "node:fs/promises";
import { join, relative } from "node:path";
import { filesUnder } from "@stowage/test-support";
import type { ProcessResult } from "./run-process.js";

/** How much of each stream and log file a report keeps: their ends, where a failure shows. */
const TAIL_CHARS = 4000;
/** The CLI's own log files a report quotes, newest first. */
const LOG_FILES_QUOTED = 3;
/** Directories under HOME that hold packages, not logs. */
const SKIPPED_DIRECTORIES = new Set(["node_modules", ".npm"]);

/**
 * What a test prints when an agent run did not exit 0: how it ended and after how long, the
 * tails of its stderr and stdout, and the tails of the newest `*.log` files the CLI wrote under
 * its HOME. A run that hangs prints nothing of its own, so its log is often the only clue.
 * For a run that exited 0 it is one line.
 */
export async function agentRunReport(
  cliName: string,
  result: ProcessResult,
  durationMs: number,
  home: string,
): Promise<string> {
  const ending = result.timedOut
    ? `timed out after ${durationMs} ms and was killed`
    : `exited with ${result.code ?? "a signal"} after ${durationMs} ms`;
  const headline = `${cliName} ${ending}`;
  if (result.code === 0 && !result.timedOut) return headline;
  const sections = [headline, tailSection("stderr", result.stderr), tailSection("stdout", result.stdout)];
  for (const log of await newestLogFiles(home)) {
    const text = await readFile(log, "utf8").catch((error: Error) => `(unreadable: ${error.message})`);
    sections.push(tailSection(`log ${relative(home, log)}`, text));
  }
  return sections.join("\n\n");
}

function tailSection(title: string, text: string): string {
  if (text.length === 0) return `--- ${title}: (empty)`;
  const tail = text.length > TAIL_CHARS ? `…${text.slice(-TAIL_CHARS)}` : text;
  return `--- ${title}:\n${tail}`;
}

async function newestLogFiles(home: string): Promise<string[]> {
  // A HOME the test already removed has no logs; a file gone between listing and stat is skipped.
  const listed = await filesUnder(home).catch(() => []);
  const logs = listed.filter(
    (path) => path.endsWith(".log") && !path.split("/").some((segment) => SKIPPED_DIRECTORIES.has(segment)),
  );
  const dated = await Promise.all(
    logs.map((path) =>
      stat(join(home, path)).then(
        (info) => ({ path: join(home, path), mtimeMs: info.mtimeMs }),
        () => undefined,
      ),
    ),
  );
  return dated
    .filter((file) => file !== undefined)
    .sort((a, b) => b.mtimeMs - a.mtimeMs)
    .slice(0, LOG_FILES_QUOTED)
    .map((file) => file.path);
}
