import {
  assertSafeKey,
  describeValue,
  mapConcurrent,
  type OperationOptions,
  StowageError,
} from "@stowage/core";
import { z } from "zod";
import { type ContextBudget, DEFAULT_CONTEXT_BUDGET, resolveBudget } from "../budget/context-budget.js";
import type { ContentRegistry } from "../content/content-registry.js";
import type { ContentRecord } from "../schemas/content-record-schema.js";
import { mimeType } from "../schemas/text-fields.js";
import { parseOrThrow } from "../schemas/validation-error.js";
import { surrogateSafeIndex } from "../text/surrogate-safe.js";
import { DEFAULT_BOOTSTRAP_THRESHOLD_CHARS } from "./bootstrap-threshold.js";

// In its own module (no zod), so that reading the settings loads no schema.
export { DEFAULT_BOOTSTRAP_THRESHOLD_CHARS };
/**
 * Characters of head + tail excerpt shown for a referenced file: the default budget's
 * `maxInlineArtifactChars` (2,000), since the excerpt is inline text too. A configured excerpt is
 * cut to the budget's `maxInlineArtifactChars` as well.
 */
export const DEFAULT_BOOTSTRAP_EXCERPT_CHARS = DEFAULT_CONTEXT_BUDGET.maxInlineArtifactChars;
/** Most files one bootstrap context accepts. */
export const MAX_BOOTSTRAP_FILES = 256;
/** Files stored at once. */
const BOOTSTRAP_STORE_CONCURRENCY = 4;

/** A workspace file for the bootstrap part of a prompt. */
export interface BootstrapFile {
  /** Relative path shown in the prompt (`AGENTS.md`, `docs/SOUL.md`); a safe key, no traversal. */
  path: string;
  content: string;
  /** Default: from the extension (`.md` → `text/markdown`, `.json` → `application/json`, else `text/plain`). */
  mime?: string;
}

/** Options of {@link buildBootstrapContext}. */
export interface BuildBootstrapContextOptions extends OperationOptions {
  /** Where large files are stored; required when `enabled`. */
  registry?: ContentRegistry;
  /** Store large files in the registry and send refs. Default: true when a registry is given. */
  enabled?: boolean;
  /**
   * Default {@link DEFAULT_BOOTSTRAP_THRESHOLD_CHARS}. With refs enabled, a file longer than the
   * budget's `maxInlineArtifactChars` is referenced whatever this says: inlining it would break
   * the budget.
   */
  thresholdChars?: number;
  /** The context budget the prompt is checked against (its `maxInlineArtifactChars`). Default {@link DEFAULT_CONTEXT_BUDGET}. */
  budget?: Partial<ContextBudget>;
  /**
   * Default {@link DEFAULT_BOOTSTRAP_EXCERPT_CHARS}; never more than the budget's
   * `maxInlineArtifactChars`. The excerpt, its marker included, is at most this long.
   */
  excerptChars?: number;
}

/**
 * How one file was sent: inline, as a ref with the record stored, or (a file the registry refuses
 * for its size) skipped, with a head/tail excerpt and the reason in the prompt.
 */
export type BootstrapFileResult =
  | { path: string; chars: number; mode: "inline" }
  | { path: string; chars: number; mode: "ref"; record: ContentRecord }
  | { path: string; chars: number; mode: "skipped"; reason: "TOO_LARGE"; message: string };

/** What {@link buildBootstrapContext} returns. */
export interface BootstrapContext {
  /** The text to put in the prompt. */
  text: string;
  files: BootstrapFileResult[];
  /** Files sent as an ArtifactRef (the `ref_files` metric). */
  refFiles: number;
  /** Files too large for the registry, sent only as a head/tail excerpt with the reason (see `files`). */
  skippedFiles: number;
  /** Characters of the largest file sent inline (for `maxInlineArtifactChars`). */
  largestInlineChars: number;
}

const MIME_BY_EXTENSION: Readonly<Record<string, string>> = {
  md: "text/markdown",
  markdown: "text/markdown",
  json: "application/json",
  yaml: "application/yaml",
  yml: "application/yaml",
  toml: "application/toml",
  html: "text/html",
};

function mimeFor(path: string): string {
  const extension = /\.([A-Za-z0-9]+)$/.exec(path)?.[1]?.toLowerCase();
  return (extension && MIME_BY_EXTENSION[extension]) || "text/plain";
}

const BootstrapFileSchema = z.strictObject({
  path: z.string(),
  content: z.string(),
  mime: mimeType().optional(),
});

function positiveInteger(value: unknown, what: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
    throw new StowageError(
      "INVALID_INPUT",
      `${what} must be a positive integer, got ${describeValue(value)}`,
    );
  }
  return value;
}

/**
 * At most `excerptChars` characters, marker included: the first and last characters of `content`,
 * cut on whole characters, with a marker between that says how much is left out and where the
 * rest is. The marker is shortened, then dropped (the head alone), when the room is too small.
 */
function headTailExcerpt(content: string, excerptChars: number, rest: string): string {
  if (content.length <= excerptChars) return content;
  for (const where of [`; ${rest}`, ""]) {
    const marker = (omitted: number) => `\n…[${omitted} chars omitted${where}]…\n`;
    // The count is not known before the cut; it has at most as many digits as the length.
    const room = excerptChars - marker(content.length).length;
    if (room < 0) continue;
    const headEnd = surrogateSafeIndex(content, Math.ceil(room / 2));
    let tailStart = content.length - Math.floor(room / 2);
    // Never half a character, and never a character more than the room: the cut moves forward.
    if (surrogateSafeIndex(content, tailStart) !== tailStart) tailStart++;
    return `${content.slice(0, headEnd)}${marker(tailStart - headEnd)}${content.slice(tailStart)}`;
  }
  return content.slice(0, surrogateSafeIndex(content, excerptChars));
}

function refSection(path: string, record: ContentRecord, content: string, excerptChars: number): string {
  const id = record.artifact_id;
  return [
    `## ${path}`,
    "",
    `ArtifactRef: ${id} (type=${record.mime}, sha256=${record.content_hash}, bytes=${record.size_bytes}, createdAt=${record.created_at})`,
    "",
    "Summary (head/tail excerpt):",
    headTailExcerpt(content, excerptChars, `call artifacts_get with artifact_id ${id} for the full file`),
  ].join("\n");
}

function skippedSection(path: string, content: string, excerptChars: number, why: string): string {
  return [
    `## ${path}`,
    "",
    `Not included in full: ${why}. There is no ArtifactRef for it.`,
    "",
    "Summary (head/tail excerpt):",
    headTailExcerpt(content, excerptChars, "the full file is not available"),
  ].join("\n");
}

/**
 * Builds the bootstrap part of a prompt from workspace files. With refs enabled, each file of at
 * least `thresholdChars` characters, or longer than the budget's `maxInlineArtifactChars`, is
 * stored in the registry and replaced by an `ArtifactRef: <sha256> (type=…, sha256=…, bytes=…,
 * createdAt=…)` line and a head/tail excerpt of about `excerptChars`; smaller files, and all files
 * when refs are off, are inlined. A file over the registry's size cap is skipped, file by file:
 * it gets a head/tail excerpt and the reason in the prompt, and `mode: "skipped"` (reason
 * `TOO_LARGE`) in `files`; the rest of the context is built. Any other error about one file fails
 * the call and names the file in `details.path`. (`ArtifactRef` is the design document's wire
 * name for a content ref.)
 */
export async function buildBootstrapContext(
  files: readonly BootstrapFile[],
  options: BuildBootstrapContextOptions = {},
): Promise<BootstrapContext> {
  if (!Array.isArray(files) || files.length > MAX_BOOTSTRAP_FILES) {
    throw new StowageError(
      "INVALID_INPUT",
      `bootstrap files must be an array of at most ${MAX_BOOTSTRAP_FILES} files, got ${describeValue(files)}`,
    );
  }
  const { registry, signal } = options;
  const enabled = options.enabled ?? registry !== undefined;
  if (typeof enabled !== "boolean") {
    throw new StowageError("INVALID_INPUT", `enabled must be a boolean, got ${describeValue(enabled)}`);
  }
  if (enabled && (!registry || typeof registry.storeText !== "function")) {
    throw new StowageError(
      "INVALID_INPUT",
      `a content registry is required when refs are enabled, got ${describeValue(registry)}`,
    );
  }
  const thresholdChars = positiveInteger(
    options.thresholdChars,
    "thresholdChars",
    DEFAULT_BOOTSTRAP_THRESHOLD_CHARS,
  );
  const { maxInlineArtifactChars } = resolveBudget(options.budget);
  const excerptChars = Math.min(
    positiveInteger(options.excerptChars, "excerptChars", DEFAULT_BOOTSTRAP_EXCERPT_CHARS),
    maxInlineArtifactChars,
  );

  const seen = new Set<string>();
  const checked = files.map((file, index) => {
    const parsed = parseOrThrow(BootstrapFileSchema, file, `bootstrap file ${index}`);
    assertSafeKey(parsed.path, `bootstrap file ${index} path`);
    if (seen.has(parsed.path)) {
      throw new StowageError(
        "INVALID_INPUT",
        `bootstrap file path ${describeValue(parsed.path)} is given twice`,
      );
    }
    seen.add(parsed.path);
    return parsed;
  });

  const results = await mapConcurrent(
    checked,
    BOOTSTRAP_STORE_CONCURRENCY,
    async (file): Promise<{ result: BootstrapFileResult; section: string }> => {
      const chars = file.content.length;
      if (!enabled || (chars < thresholdChars && chars <= maxInlineArtifactChars)) {
        return {
          result: { path: file.path, chars, mode: "inline" },
          section: `## ${file.path}\n\n${file.content}`,
        };
      }
      try {
        const { record } = await registry!.storeText(file.content, {
          type: "doc",
          mime: file.mime ?? mimeFor(file.path),
          producer: "system",
          signal,
        });
        return {
          result: { path: file.path, chars, mode: "ref", record },
          section: refSection(file.path, record, file.content, excerptChars),
        };
      } catch (err) {
        if (StowageError.is(err, "TOO_LARGE")) {
          const message = `${chars} characters are over the content registry's size limit (${err.message})`;
          return {
            result: { path: file.path, chars, mode: "skipped", reason: "TOO_LARGE", message },
            section: skippedSection(file.path, file.content, excerptChars, message),
          };
        }
        if (StowageError.is(err) && err.code !== "ABORTED") {
          throw new StowageError(err.code, `bootstrap file ${describeValue(file.path)}: ${err.message}`, {
            cause: err,
            ...(err.reason === undefined ? {} : { reason: err.reason }),
            details: { ...err.details, path: file.path },
          });
        }
        throw err;
      }
    },
    signal,
  );

  const inline = results.filter(({ result }) => result.mode === "inline").map(({ result }) => result.chars);
  const count = (mode: BootstrapFileResult["mode"]) =>
    results.filter(({ result }) => result.mode === mode).length;
  return {
    text: results.map(({ section }) => section).join("\n\n"),
    files: results.map(({ result }) => result),
    refFiles: count("ref"),
    skippedFiles: count("skipped"),
    // reduce, never Math.max(...inline): a spread over many files overflows the stack.
    largestInlineChars: inline.reduce((max, chars) => Math.max(max, chars), 0),
  };
}
