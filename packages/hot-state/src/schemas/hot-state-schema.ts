import { z } from "zod";
import {
  freeText,
  identifier,
  MAX_CONTENT_SUMMARY_CHARS,
  MAX_HOT_STATE_LIST_ITEMS,
  MAX_HOT_STATE_TEXT_CHARS,
  MAX_LABEL_CHARS,
  MAX_VERSION_CHARS,
  sha256Hex,
  textList,
} from "./text-fields.js";

/** What referenced content is, for the model deciding whether to fetch it (the JSON field `type`). */
export const CONTENT_KINDS = ["repo", "doc", "code", "log", "data", "plan", "result"] as const;
/** One of {@link CONTENT_KINDS}. */
export type ContentKind = (typeof CONTENT_KINDS)[number];

/** The values of the hot state's `risk_level`. */
export const RISK_LEVELS = ["low", "medium", "high"] as const;
/** One of {@link RISK_LEVELS}. */
export type RiskLevel = (typeof RISK_LEVELS)[number];

export const ContentKindSchema = z.enum(CONTENT_KINDS);

/**
 * A content ref: a compact reference to stored content, as listed in the hot state. The JSON
 * names (`artifact_id`, `artifact_index`) are the design document's wire names, which prompts
 * and models see; they do not mean a session artifact.
 */
export const ContentRefSchema = z.strictObject({
  artifact_id: sha256Hex().describe("SHA-256 of the content's bytes, 64 lowercase hex"),
  type: ContentKindSchema,
  label: freeText(MAX_LABEL_CHARS).optional().describe("a human-readable name"),
  version: freeText(MAX_VERSION_CHARS).optional(),
  summary: freeText(MAX_CONTENT_SUMMARY_CHARS).optional().describe("one or two lines"),
});
/** An entry of the hot state's `artifact_index` (see {@link ContentRefSchema}). */
export type ContentRef = z.infer<typeof ContentRefSchema>;

/**
 * The hot state: a small JSON object included in every dispatcher prompt. Lists are ordered
 * oldest first (append order); shedding removes from the front.
 */
export const HotStateSchema = z.strictObject({
  session_id: identifier(),
  session_key: identifier().optional(),
  run_id: identifier().optional(),
  objective: freeText(MAX_HOT_STATE_TEXT_CHARS).optional(),
  current_plan_id: identifier().nullable().optional(),
  accepted_decisions: textList().optional(),
  open_questions: textList().optional(),
  constraints: textList().optional(),
  last_successful_step: freeText(MAX_HOT_STATE_TEXT_CHARS).optional(),
  risk_level: z.enum(RISK_LEVELS).optional(),
  artifact_index: z
    .array(ContentRefSchema)
    .max(MAX_HOT_STATE_LIST_ITEMS, `must hold at most ${MAX_HOT_STATE_LIST_ITEMS} items`)
    .optional(),
});
/** The hot state (see {@link HotStateSchema}). */
export type HotState = z.infer<typeof HotStateSchema>;
