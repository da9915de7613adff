import { z } from "zod";
import {
  freeText,
  identifier,
  MAX_ARTIFACT_SUMMARY_CHARS,
  MAX_HOT_STATE_LIST_ITEMS,
  MAX_HOT_STATE_TEXT_CHARS,
  MAX_LABEL_CHARS,
  MAX_VERSION_CHARS,
  sha256Hex,
  textList,
} from "./text-fields.js";

/** What an artifact is, for the model deciding whether to fetch it. */
export const ARTIFACT_TYPES = ["repo", "doc", "code", "log", "data", "plan", "result"] as const;
export type ArtifactType = (typeof ARTIFACT_TYPES)[number];

export const RISK_LEVELS = ["low", "medium", "high"] as const;
export type RiskLevel = (typeof RISK_LEVELS)[number];

export const ArtifactTypeSchema = z.enum(ARTIFACT_TYPES);

/** A compact reference to an artifact, as listed in the hot state. */
export const ArtifactIndexEntrySchema = z.strictObject({
  artifact_id: sha256Hex().describe("SHA-256 of the artifact's bytes, 64 lowercase hex"),
  type: ArtifactTypeSchema,
  label: freeText(MAX_LABEL_CHARS).optional().describe("a human-readable name"),
  version: freeText(MAX_VERSION_CHARS).optional(),
  summary: freeText(MAX_ARTIFACT_SUMMARY_CHARS).optional().describe("one or two lines"),
});
export type ArtifactIndexEntry = z.infer<typeof ArtifactIndexEntrySchema>;

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
    .array(ArtifactIndexEntrySchema)
    .max(MAX_HOT_STATE_LIST_ITEMS, `must hold at most ${MAX_HOT_STATE_LIST_ITEMS} items`)
    .optional(),
});
export type HotState = z.infer<typeof HotStateSchema>;
