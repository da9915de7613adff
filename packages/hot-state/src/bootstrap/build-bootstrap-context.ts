import {
  assertSafeKey,
  describeValue,
  mapConcurrent,
  type OperationOptions,
  StowageError,
} from "@stowage/core";
import { z } from "zod";
import {
  type ContextBudget,
  DEFAULT_BOOTSTRAP_THRESHOLD_CHARS,
  DEFAULT_CONTEXT_BUDGET,
  resolveBudget,
} from "../budget/context-budget.js";
import type { ContentRegistry } from "../content/content-registry.js";
import {
  type ContentRecord,
  invalidInput,
  invalidValue,
  mimeType,
  parseOrThrow,
} from "../schemas/schemas.js";
import { surrogateSafeIndex } from "../text/utf8.js";

const MAX_BOOTSTRAP_FILES = 256;
const BOOTSTRAP_STORE_CONCURRENCY = 4;

/** A workspace file for the bootstrap part of a prompt. */
export interface BootstrapFile {
  /** Relative path shown in the prompt (`AGENTS.md`, `docs/SOUL.md`); a safe key, no traversal. */
  path: string;
  content: string;
  /** Default: from the extension (`.md` → `text/markdown`, `.json` → `application/json`, else `text/plain`). */
  mime?: string;
}

/** Options of {@link buildBootstrapContext}: refs are `enabled` by default when a `registry` is given. */
export interface BuildBootstrapContextOptions extends OperationOptions {
  registry?: ContentRegistry;
  enabled?: boolean;
  /** Default 2,001; a file longer than the budget's `maxInlineArtifactChars` is a ref whatever this says. */
  thresholdChars?: number;
  budget?: Partial<ContextBudget>;
}

/**
 * How one file was sent: inline, as a ref with the record stored, or (a file the registry refuses
 * for its size) skipped, with a head/tail excerpt and the reason in the prompt.
 */
export type BootstrapFileResult =
  | { path: string; chars: number; mode: "inline" }
  | { path: string; chars: number; mode: "ref"; record: ContentRecord }
  | { path: string; chars: number; mode: "skipped"; reason: "TOO_LARGE"; message: string };

/** The prompt's text, how each file was sent, and how many went each way. */
export interface BootstrapContext {
  text: string;
  files: BootstrapFileResult[];
  /** Files sent as an ArtifactRef (the `ref_files` metric). */
  refFiles: number;
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

const BootstrapFileSchema = z.strictObject({
  path: z.string(),
  content: z.string(),
  mime: mimeType().optional(),
});

/**
 * At most `excerptChars` characters of `content`, marker included: its head and tail, cut on whole
 * characters, with a marker between saying how much is left out and where the rest is (shortened,
 * then dropped for the head alone, when the room is too small).
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

/** A file's section of the prompt when it is not inlined: its ref line (or why not), then an excerpt. */
function excerptSection(path: string, content: string, excerptChars: number, record: ContentRecord | string) {
  const [head, rest] =
    typeof record === "string"
      ? [`Not included in full: ${record}. There is no ArtifactRef for it.`, "the full file is not available"]
      : [
          `ArtifactRef: ${record.artifact_id} (type=${record.mime}, sha256=${record.content_hash}, bytes=${record.size_bytes}, createdAt=${record.created_at})`,
          `call artifacts_get with artifact_id ${record.artifact_id} for the full file`,
        ];
  const excerpt = headTailExcerpt(content, excerptChars, rest);
  return `## ${path}\n\n${head}\n\nSummary (head/tail excerpt):\n${excerpt}`;
}

function checkedFiles(files: readonly BootstrapFile[]) {
  if (!Array.isArray(files) || files.length > MAX_BOOTSTRAP_FILES) {
    const message = `bootstrap files must be an array of at most ${MAX_BOOTSTRAP_FILES} files`;
    throw invalidInput(`${message}, got ${describeValue(files)}`, { limit: MAX_BOOTSTRAP_FILES });
  }
  const seen = new Set<string>();
  return files.map((file, index) => {
    const parsed = parseOrThrow(BootstrapFileSchema, file, `bootstrap file ${index}`);
    assertSafeKey(parsed.path, `bootstrap file ${index} path`);
    if (seen.has(parsed.path))
      throw invalidInput(`bootstrap file path ${describeValue(parsed.path)} is given twice`);
    seen.add(parsed.path);
    return parsed;
  });
}

/**
 * The bootstrap part of a prompt: with refs enabled, a file of at least `thresholdChars` (or over
 * `maxInlineArtifactChars`) is stored and sent as an `ArtifactRef:` line and a head/tail excerpt,
 * one over the registry's cap is skipped (excerpt and reason); others are inlined. Any other error
 * about one file fails the call and names it in `details.path`.
 */
export async function buildBootstrapContext(
  files: readonly BootstrapFile[],
  options: BuildBootstrapContextOptions = {},
): Promise<BootstrapContext> {
  const checked = checkedFiles(files);
  const { registry, signal } = options;
  const enabled = options.enabled ?? registry !== undefined;
  if (typeof enabled !== "boolean") throw invalidValue("enabled must be a boolean", enabled);
  if (enabled && typeof registry?.storeText !== "function")
    throw invalidValue("refs are enabled but no content registry is given", registry);
  const { thresholdChars = DEFAULT_BOOTSTRAP_THRESHOLD_CHARS } = options;
  if (!Number.isSafeInteger(thresholdChars) || thresholdChars < 1)
    throw invalidValue("thresholdChars must be a positive integer", thresholdChars);
  const { maxInlineArtifactChars } = resolveBudget(options.budget);
  // The excerpt, marker included, is inline text too: at most the budget's inline limit, and 2,000.
  const excerptChars = Math.min(DEFAULT_CONTEXT_BUDGET.maxInlineArtifactChars, maxInlineArtifactChars);

  const sent = async ({ path, content, mime }: BootstrapFile) => {
    const chars = content.length;
    if (!enabled || (chars < thresholdChars && chars <= maxInlineArtifactChars)) {
      return { result: { path, chars, mode: "inline" as const }, section: `## ${path}\n\n${content}` };
    }
    try {
      const extension = /\.([A-Za-z0-9]+)$/.exec(path)?.[1]?.toLowerCase() ?? "";
      const stored = { type: "doc", mime: mime ?? MIME_BY_EXTENSION[extension] ?? "text/plain" } as const;
      const { record } = await registry!.storeText(content, { ...stored, producer: "system", signal });
      const section = excerptSection(path, content, excerptChars, record);
      return { result: { path, chars, mode: "ref" as const, record }, section };
    } catch (err) {
      if (StowageError.is(err, "TOO_LARGE")) {
        const message = `${chars} characters are over the content registry's size limit (${err.message})`;
        const result = { path, chars, mode: "skipped" as const, reason: "TOO_LARGE" as const, message };
        return { result, section: excerptSection(path, content, excerptChars, message) };
      }
      if (!StowageError.is(err) || err.code === "ABORTED") throw err;
      const options = { cause: err, reason: err.reason, details: { ...err.details, path } };
      throw new StowageError(err.code, `bootstrap file ${describeValue(path)}: ${err.message}`, options);
    }
  };
  const results = await mapConcurrent(checked, BOOTSTRAP_STORE_CONCURRENCY, sent, signal);

  const sentAs = (mode: BootstrapFileResult["mode"]) => results.filter(({ result }) => result.mode === mode);
  return {
    text: results.map(({ section }) => section).join("\n\n"),
    files: results.map(({ result }) => result),
    refFiles: sentAs("ref").length,
    skippedFiles: sentAs("skipped").length,
    // reduce, never Math.max(...inline): a spread over many files overflows the stack.
    largestInlineChars: sentAs("inline").reduce((max, { result }) => Math.max(max, result.chars), 0),
  };
}
