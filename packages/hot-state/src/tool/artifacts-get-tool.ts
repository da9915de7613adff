import { type OperationOptions, StowageError } from "@stowage/core";
import { z } from "zod";
import type { ContentRegistry } from "../content/content-registry.js";
import {
  type ContentRecord,
  invalidInput,
  invalidValue,
  parseOrThrow,
  SHA256_HEX,
} from "../schemas/schemas.js";
import { decodeUtf8, surrogateSafeIndex } from "../text/utf8.js";

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

/**
 * What the `artifacts_get` tool returns to the model: a content ref's record fields, then one page
 * of its text (`content`, empty with encoding `binary` for bytes that are not UTF-8), the whole
 * text's length in UTF-16 code units and where the next page starts (`null` at the end).
 */
export interface ArtifactsGetResult
  extends Omit<ContentRecord, "content_uri" | "mime" | "summary" | "producer" | "type"> {
  type: string;
  mime?: string;
  summary?: string;
  producer?: string;
  encoding: "utf-8" | "binary";
  total_chars: number;
  offset: number;
  next_offset: number | null;
  truncated: boolean;
  content: string;
}

/** A JSON Schema (draft 2020-12) document as a plain object. */
export type JsonSchema = Record<string, unknown>;

/** The parts of a tool every provider format is built from. */
export interface ToolDefinition {
  name: string;
  description: string;
  /** JSON Schema of the input (an object; `additionalProperties: false`). */
  inputSchema: Readonly<JsonSchema>;
}

/** The `artifacts_get` tool: its definition for a provider and its execution. */
export interface ArtifactsGetTool extends ToolDefinition {
  /** INVALID_INPUT (bad id or offset), NOT_FOUND or INTEGRITY: send `err.message` back to the model. */
  execute(input: unknown, options?: OperationOptions): Promise<ArtifactsGetResult>;
}

/** Where the tool reads content refs from, and characters per page (default 8,000). */
export interface ArtifactsGetToolOptions {
  registry: ContentRegistry;
  maxChars?: number;
}

/** An Anthropic Messages API tool: `{ name, description, input_schema }`. */
export function toAnthropicTool({ name, description, inputSchema }: ToolDefinition) {
  return { name, description, input_schema: inputSchema };
}

/**
 * The `artifacts_get` tool (named after the design document's tool, which models know): fetches
 * a content ref from the registry by its SHA-256 id and returns its metadata and up to `maxChars`
 * characters of its text from `offset`, never ending a page inside a surrogate pair.
 */
export function createArtifactsGetTool(options: ArtifactsGetToolOptions): ArtifactsGetTool {
  const { registry, maxChars = DEFAULT_TOOL_MAX_CHARS } = options ?? {};
  if (typeof registry?.get !== "function")
    throw invalidValue("createArtifactsGetTool: registry must be a ContentRegistry", registry);
  if (!Number.isSafeInteger(maxChars) || maxChars < MIN_TOOL_MAX_CHARS)
    throw invalidValue(`maxChars must be an integer of at least ${MIN_TOOL_MAX_CHARS}`, maxChars);
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
      const decoded = decodeUtf8(found.content);
      const text = decoded ?? "";
      const requested = parsed.offset ?? 0;
      if (requested > text.length)
        throw invalidInput(`offset must be from 0 to total_chars (${text.length}), got ${requested}`);
      // An offset inside a pair (only a hand-made one can be) starts at the pair instead.
      const offset = surrogateSafeIndex(text, requested);
      const end = surrogateSafeIndex(text, Math.min(offset + maxChars, text.length));
      return {
        ...{ artifact_id, type, mime, summary, producer, size_bytes, content_hash, created_at },
        encoding: decoded === null ? "binary" : "utf-8",
        total_chars: text.length,
        ...{ offset, next_offset: end < text.length ? end : null, truncated: end < text.length },
        content: text.slice(offset, end),
      };
    },
  });
}
