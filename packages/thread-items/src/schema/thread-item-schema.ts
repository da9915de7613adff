import { z } from "zod";
import { itemIdSchema } from "./item-id.js";

/** The fields `fitToBudget` may cut, in the order it cuts them (paths relative to the item; `tool.*` and `text` live in `metadata`). */
export const TRUNCATABLE_FIELDS = ["tool.output", "tool.input", "text", "content[0].text"] as const;
export type TruncatableField = (typeof TRUNCATABLE_FIELDS)[number];

/** Every `metadata.type` of an agent event; an item without one is a plain user post. */
export const THREAD_ITEM_TYPES = [
  "text",
  "tool_call",
  "tool_result",
  "thinking",
  "status",
  "turn_end",
  "pending_prompt",
  "pending_prompt_resolved",
] as const;
export type ThreadItemType = (typeof THREAD_ITEM_TYPES)[number];

/** Kinds of interactive prompt an agent can raise. */
export const PROMPT_KINDS = ["text", "approval", "ask_user_question"] as const;
export type PromptKind = (typeof PROMPT_KINDS)[number];

/** How a pending prompt ended. An approval that was not answered counts as denied. */
export const PROMPT_OUTCOMES = ["answered", "cancelled", "failed"] as const;
export type PromptOutcome = (typeof PROMPT_OUTCOMES)[number];

/** A status token: lower-case snake case, e.g. `compacting_context`. */
export const STATUS_TOKEN_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;

const nonEmpty = z.string().min(1);
const count = z.number().int().nonnegative();

// Set by fitToBudget on any item type (a plain post included) when it cut a field.
const truncationMarkers = {
  truncated: z.boolean().optional(),
  truncated_fields: z.array(z.enum(TRUNCATABLE_FIELDS)).optional(),
  local_log: z.string().optional(),
};

const textContentSchema = z.looseObject({ type: z.literal("text"), text: z.string() });

const textMetadataSchema = z.looseObject({ type: z.literal("text"), ...truncationMarkers });

const toolCallMetadataSchema = z.looseObject({
  type: z.literal("tool_call"),
  tool: z.looseObject({ name: nonEmpty, invocation_id: nonEmpty, input: z.unknown() }),
  ...truncationMarkers,
});

const toolResultMetadataSchema = z.looseObject({
  type: z.literal("tool_result"),
  // No tool name: renderers take it from the tool_call with the same invocation_id.
  tool: z.looseObject({ invocation_id: nonEmpty, is_error: z.boolean(), output: z.string() }),
  ...truncationMarkers,
});

const thinkingMetadataSchema = z.looseObject({
  type: z.literal("thinking"),
  text: z.string(),
  full_text_length: count,
  ...truncationMarkers,
});

const statusMetadataSchema = z.looseObject({
  type: z.literal("status"),
  status: z.string().regex(STATUS_TOKEN_PATTERN),
  detail: z.string().optional(),
  ...truncationMarkers,
});

/** A token figure of a turn; null when the source did not record it (never a made-up zero). */
const tokenCount = count.nullable();

const turnStatsSchema = z
  .looseObject({
    /** Total input the model processed this turn: cached plus uncached; null when unknown. */
    input_tokens: tokenCount,
    /** The part of `input_tokens` served from the prompt cache; null when unknown. */
    input_tokens_cached: tokenCount,
    /** Null when unknown. */
    output_tokens: tokenCount,
    /** Wall time of the turn; null when the source did not record it. */
    duration_ms: count.nullable(),
  })
  // Checked only when both figures are known.
  .refine(
    (stats) =>
      stats.input_tokens === null ||
      stats.input_tokens_cached === null ||
      stats.input_tokens_cached <= stats.input_tokens,
    {
      message: "input_tokens_cached must not exceed input_tokens (which includes the cached part)",
      path: ["input_tokens_cached"],
    },
  );

const turnEndMetadataSchema = z.looseObject({
  type: z.literal("turn_end"),
  stats: turnStatsSchema,
  ...truncationMarkers,
});

const askUserQuestionSchema = z.looseObject({
  question: nonEmpty,
  header: z.string().optional(),
  options: z.array(z.looseObject({ label: nonEmpty, description: z.string().optional() })).optional(),
  multiSelect: z.boolean().optional(),
});

export const promptSchema = z.discriminatedUnion("kind", [
  z.looseObject({ kind: z.literal("text"), text: z.string() }),
  z.looseObject({
    kind: z.literal("approval"),
    tool_name: nonEmpty,
    invocation_id: nonEmpty.optional(),
    input: z.unknown(),
    message: z.string().optional(),
  }),
  z.looseObject({ kind: z.literal("ask_user_question"), questions: z.array(askUserQuestionSchema).min(1) }),
]);

const pendingPromptMetadataSchema = z.looseObject({
  type: z.literal("pending_prompt"),
  prompt_id: nonEmpty,
  prompt: promptSchema,
  ...truncationMarkers,
});

const pendingPromptResolvedMetadataSchema = z.looseObject({
  type: z.literal("pending_prompt_resolved"),
  prompt_id: nonEmpty,
  kind: z.enum(PROMPT_KINDS),
  outcome: z.enum(PROMPT_OUTCOMES),
  /** Approvals only: true only when the prompt was answered with an approval. */
  approved: z.boolean().optional(),
  response: z.unknown().optional(),
  detail: z.string().optional(),
  ...truncationMarkers,
});

// `type` absent (or undefined) marks a plain user post; it may still carry truncation markers.
const plainPostMetadataSchema = z.looseObject({
  type: z.undefined().optional(),
  ...truncationMarkers,
});

const threadItemMetadataSchema = z.discriminatedUnion("type", [
  textMetadataSchema,
  toolCallMetadataSchema,
  toolResultMetadataSchema,
  thinkingMetadataSchema,
  statusMetadataSchema,
  turnEndMetadataSchema,
  pendingPromptMetadataSchema,
  pendingPromptResolvedMetadataSchema,
  plainPostMetadataSchema,
]);

/** One thread item: a brief human rendering in `content`, the structured event in `metadata`. */
export const threadItemSchema = z.looseObject({
  /** Stable id (the thread log keys full payloads by it). */
  id: itemIdSchema.optional(),
  /** Stamped by the platform on every post, so a consumer can drop its own. */
  user_id: z.string().optional(),
  content: z.array(textContentSchema).min(1),
  metadata: threadItemMetadataSchema.optional(),
  /**
   * Stamped by the feeds on a post whose secrets they replaced with `[REDACTED:<kind>]`: each
   * one's kind, the string's path in the item and the placeholder's offset in it. Never the secret.
   */
  redactions: z
    .array(z.object({ kind: z.string(), path: z.string(), index: z.number().int().nonnegative() }))
    .optional(),
  /** Stamped with `redactions` when more secrets were replaced than it lists (256): how many more. */
  redactions_omitted: z.number().int().positive().optional(),
});

export type TextContent = z.infer<typeof textContentSchema>;
export type TextMetadata = z.infer<typeof textMetadataSchema>;
export type ToolCallMetadata = z.infer<typeof toolCallMetadataSchema>;
export type ToolResultMetadata = z.infer<typeof toolResultMetadataSchema>;
export type ThinkingMetadata = z.infer<typeof thinkingMetadataSchema>;
export type StatusMetadata = z.infer<typeof statusMetadataSchema>;
export type TurnStats = z.infer<typeof turnStatsSchema>;
export type TurnEndMetadata = z.infer<typeof turnEndMetadataSchema>;
export type Prompt = z.infer<typeof promptSchema>;
export type AskUserQuestion = z.infer<typeof askUserQuestionSchema>;
export type PendingPromptMetadata = z.infer<typeof pendingPromptMetadataSchema>;
export type PendingPromptResolvedMetadata = z.infer<typeof pendingPromptResolvedMetadataSchema>;
export type PlainPostMetadata = z.infer<typeof plainPostMetadataSchema>;
export type ThreadItemMetadata = z.infer<typeof threadItemMetadataSchema>;
export type ThreadItem = z.infer<typeof threadItemSchema>;

/** The fields every item has, whatever its metadata. */
export interface ThreadItemBase {
  id?: string | undefined;
  user_id?: string | undefined;
  content: TextContent[];
  [key: string]: unknown;
}
/** A plain user post: no `metadata.type`. */
export type PlainPostItem = ThreadItemBase & { metadata?: PlainPostMetadata };
type ItemWith<M> = ThreadItemBase & { metadata: M };
export type TextItem = ItemWith<TextMetadata>;
export type ToolCallItem = ItemWith<ToolCallMetadata>;
export type ToolResultItem = ItemWith<ToolResultMetadata>;
export type ThinkingItem = ItemWith<ThinkingMetadata>;
export type StatusItem = ItemWith<StatusMetadata>;
export type TurnEndItem = ItemWith<TurnEndMetadata>;
export type PendingPromptItem = ItemWith<PendingPromptMetadata>;
export type PendingPromptResolvedItem = ItemWith<PendingPromptResolvedMetadata>;
