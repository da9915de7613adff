import {
  assertSafeKey,
  describeValue,
  mapConcurrent,
  type OperationOptions,
  StowageError,
} from "@stowage/core";
import { z } from "zod";
import type { ArtifactRegistry } from "../artifacts/artifact-registry.js";
import type { ArtifactRecord } from "../schemas/artifact-record-schema.js";
import { mimeType } from "../schemas/text-fields.js";
import { parseOrThrow } from "../schemas/validation-error.js";
import { surrogateSafeIndex } from "../text/surrogate-safe.js";

/** Files of at least this many characters are stored and referenced instead of inlined. */
export const DEFAULT_BOOTSTRAP_THRESHOLD_CHARS = 8_000;
/** Characters of head + tail excerpt shown for a referenced file. */
export const DEFAULT_BOOTSTRAP_EXCERPT_CHARS = 4_000;
/** Most files one bootstrap context accepts. */
export const MAX_BOOTSTRAP_FILES = 256;
/** Files stored at once. */
export const BOOTSTRAP_STORE_CONCURRENCY = 4;

export interface BootstrapFile {
  /** Relative path shown in the prompt (`AGENTS.md`, `docs/SOUL.md`); a safe key, no traversal. */
  path: string;
  content: string;
  /** Default: from the extension (`.md` → `text/markdown`, `.json` → `application/json`, else `text/plain`). */
  mime?: string;
}

export interface BuildBootstrapContextOptions extends OperationOptions {
  /** Where large files are stored; required when `enabled`. */
  registry?: ArtifactRegistry;
  /** Store large files as artifacts. Default: true when a registry is given. */
  enabled?: boolean;
  /** Default {@link DEFAULT_BOOTSTRAP_THRESHOLD_CHARS}. */
  thresholdChars?: number;
  /** Default {@link DEFAULT_BOOTSTRAP_EXCERPT_CHARS}. */
  excerptChars?: number;
}

export type BootstrapFileResult =
  | { path: string; chars: number; mode: "inline" }
  | { path: string; chars: number; mode: "ref"; record: ArtifactRecord };

export interface BootstrapContext {
  /** The text to put in the prompt. */
  text: string;
  files: BootstrapFileResult[];
  /** Files sent as an ArtifactRef (the `ref_files` metric). */
  refFiles: number;
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

/** The first and last `excerptChars / 2` characters, cut on whole characters, with a marker between. */
function headTailExcerpt(content: string, excerptChars: number, id: string): string {
  if (content.length <= excerptChars) return content;
  const headEnd = surrogateSafeIndex(content, Math.ceil(excerptChars / 2));
  const tailStart = surrogateSafeIndex(content, content.length - Math.floor(excerptChars / 2));
  const omitted = tailStart - headEnd;
  return `${content.slice(0, headEnd)}\n…[${omitted} chars omitted; call artifacts_get with artifact_id ${id} for the full file]…\n${content.slice(tailStart)}`;
}

function refSection(path: string, record: ArtifactRecord, content: string, excerptChars: number): string {
  const id = record.artifact_id;
  return [
    `## ${path}`,
    "",
    `ArtifactRef: ${id} (type=${record.mime}, sha256=${record.content_hash}, bytes=${record.size_bytes}, createdAt=${record.created_at})`,
    "",
    "Summary (head/tail excerpt):",
    headTailExcerpt(content, excerptChars, id),
  ].join("\n");
}

/**
 * Builds the bootstrap part of a prompt from workspace files. With refs enabled, each file of at
 * least `thresholdChars` characters is stored in the registry and replaced by an
 * `ArtifactRef: <sha256> (type=…, sha256=…, bytes=…, createdAt=…)` line and a head/tail excerpt
 * of about `excerptChars`; smaller files, and all files when refs are off, are inlined. A file
 * over the registry's size cap fails with TOO_LARGE rather than being cut silently.
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
      `an artifact registry is required when artifact refs are enabled, got ${describeValue(registry)}`,
    );
  }
  const thresholdChars = positiveInteger(
    options.thresholdChars,
    "thresholdChars",
    DEFAULT_BOOTSTRAP_THRESHOLD_CHARS,
  );
  const excerptChars = positiveInteger(options.excerptChars, "excerptChars", DEFAULT_BOOTSTRAP_EXCERPT_CHARS);

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
      if (!enabled || chars < thresholdChars) {
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
        if (StowageError.is(err) && err.code !== "ABORTED") {
          throw new StowageError(err.code, `bootstrap file ${describeValue(file.path)}: ${err.message}`, {
            cause: err,
            ...(err.reason === undefined ? {} : { reason: err.reason }),
            ...(err.details === undefined ? {} : { details: err.details }),
          });
        }
        throw err;
      }
    },
    signal,
  );

  const inline = results.filter(({ result }) => result.mode === "inline").map(({ result }) => result.chars);
  return {
    text: results.map(({ section }) => section).join("\n\n"),
    files: results.map(({ result }) => result),
    refFiles: results.length - inline.length,
    largestInlineChars: inline.length === 0 ? 0 : Math.max(...inline),
  };
}
