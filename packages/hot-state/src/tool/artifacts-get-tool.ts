import { describeValue, type OperationOptions, StowageError } from "@stowage/core";
import { z } from "zod";
import type { ContentRegistry } from "../content/content-registry.js";
import type { ContentRecord } from "../schemas/schemas.js";
import { invalidInput, parseOrThrow, SHA256_HEX } from "../schemas/schemas.js";
import { decodeUtf8, surrogateSafeIndex } from "../text/utf8.js";
import type { JsonSchema } from "./tool-formats.js";

/** Most characters of content one call returns; `offset` pages further. */
export const DEFAULT_TOOL_MAX_CHARS = 8_000;
/** Smallest page accepted: a page must hold at least one whole astral character. */
const MIN_TOOL_MAX_CHARS = 16;

const ArtifactsGetInputSchema = z.strictObject({
  artifact_id: z
    .string()
    .regex(SHA256_HEX, "must be 64 lowercase hex characters (the sha256 shown in the artifact index)")
    .describe(
      "The artifact's id: 64 lowercase hex characters, as listed in artifact_index or an ArtifactRef line.",
    ),
  offset: z
    .int()
    .min(0)
    .optional()
    .describe(
      "Character offset to read from; pass next_offset from the previous call to read the next page.",
    ),
});
/** The input of the `artifacts_get` tool, as the model sends it. */
export type ArtifactsGetInput = z.infer<typeof ArtifactsGetInputSchema>;

/** What the `artifacts_get` tool returns to the model: one page of a content ref, after its record's fields. */
export interface ArtifactsGetResult
  extends Omit<ContentRecord, "content_uri" | "mime" | "summary" | "producer" | "type"> {
  type: string;
  mime?: string;
  summary?: string;
  producer?: string;
  /** `utf-8`: `content` holds text; `binary`: the bytes are not text and `content` is empty. */
  encoding: "utf-8" | "binary";
  /** Length of the whole text in UTF-16 code units (JavaScript characters). */
  total_chars: number;
  /** Where this page starts. */
  offset: number;
  /** Where the next page starts, or `null` when this page reaches the end. */
  next_offset: number | null;
  truncated: boolean;
  content: string;
}

/** The `artifacts_get` tool: its definition for a provider and its execution. */
export interface ArtifactsGetTool {
  name: string;
  description: string;
  /** JSON Schema of the input (an object; `additionalProperties: false`). */
  inputSchema: Readonly<JsonSchema>;
  /**
   * Runs the tool. Throws StowageError INVALID_INPUT (bad id or offset), NOT_FOUND or INTEGRITY;
   * send `err.message` back to the model as an error result.
   */
  execute(input: unknown, options?: OperationOptions): Promise<ArtifactsGetResult>;
}

/** Options of {@link createArtifactsGetTool}: where it reads content refs from, and characters per page (default 8,000). */
export interface ArtifactsGetToolOptions {
  registry: ContentRegistry;
  maxChars?: number;
}

/**
 * The `artifacts_get` tool (named after the design document's tool, which models know): fetches
 * a content ref from the registry by its SHA-256 id and returns its metadata and up to `maxChars`
 * characters of its text from `offset`. A page never ends between the two halves of a surrogate
 * pair. `toAnthropicTool` gives the Anthropic Messages format.
 */
export function createArtifactsGetTool(options: ArtifactsGetToolOptions): ArtifactsGetTool {
  const { registry, maxChars = DEFAULT_TOOL_MAX_CHARS } = options ?? {};
  if (typeof registry?.get !== "function") {
    throw invalidInput(
      `createArtifactsGetTool: registry must be a ContentRegistry, got ${describeValue(registry)}`,
    );
  }
  if (!Number.isSafeInteger(maxChars) || maxChars < MIN_TOOL_MAX_CHARS) {
    throw invalidInput(
      `maxChars must be an integer of at least ${MIN_TOOL_MAX_CHARS}, got ${describeValue(maxChars)}`,
    );
  }
  const { $schema: _dialect, ...inputSchema } = z.toJSONSchema(ArtifactsGetInputSchema, { io: "input" });
  return Object.freeze({
    name: "artifacts_get",
    description:
      `Fetch a stored artifact (a file, document, log or data the prompt refers to by id) by its ` +
      `64-character sha256 id. Returns its metadata and up to ${maxChars} characters of content; ` +
      `when next_offset is not null, call again with offset=next_offset to read more.`,
    inputSchema: Object.freeze(inputSchema),
    async execute(input: unknown, opts: OperationOptions = {}): Promise<ArtifactsGetResult> {
      const parsed = parseOrThrow(ArtifactsGetInputSchema, input, "artifacts_get input");
      const found = await registry.get(parsed.artifact_id, opts);
      if (!found) throw new StowageError("NOT_FOUND", `artifact ${parsed.artifact_id} does not exist`);
      const { artifact_id, type, mime, summary, producer, size_bytes, content_hash, created_at } =
        found.record;
      const text = decodeUtf8(found.content);
      const total = text?.length ?? 0;
      const requested = parsed.offset ?? 0;
      if (requested > total)
        throw invalidInput(`offset must be from 0 to total_chars (${total}), got ${requested}`);
      // An offset inside a pair (only a hand-made one can be) starts at the pair instead.
      const offset = text === null ? 0 : surrogateSafeIndex(text, requested);
      const end = text === null ? 0 : surrogateSafeIndex(text, Math.min(offset + maxChars, total));
      return {
        ...{ artifact_id, type, mime, summary, producer, size_bytes, content_hash, created_at },
        encoding: text === null ? "binary" : "utf-8",
        total_chars: total,
        offset,
        next_offset: end < total ? end : null,
        truncated: end < total,
        content: text?.slice(offset, end) ?? "",
      };
    },
  });
}
