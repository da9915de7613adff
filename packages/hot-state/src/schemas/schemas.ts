import { BLOB_REF_PREFIX, describeValue, parseContentType, StowageError } from "@stowage/core";
import { z } from "zod";

/** Longest identifier (`session_id`, `session_key`, `run_id`, `current_plan_id`), in UTF-16 code units. */
export const MAX_ID_CHARS = 256;
/** Longest free-text field of the hot state (objective, a decision, a question, a constraint, a step). */
const MAX_TEXT_CHARS = 2_000;
/** Most items a hot-state list accepts as input. */
export const MAX_HOT_STATE_LIST_ITEMS = 200;
/** Longest `summary`, in a content ref and in a content record. */
export const MAX_CONTENT_SUMMARY_CHARS = 500;
/** Longest content type core's `parseContentType` reads (its README: 255 characters). */
const MAX_CONTENT_TYPE_LENGTH = 255;
const MAX_CONTENT_URI_CHARS = 2_048;
/** Most issues quoted in a message; all of them are in `details.issues`. */
const MAX_ISSUES_IN_MESSAGE = 5;

// Hot-state ids are free text by design (a session key "agent:main:sess 1", another system's run
// id), not core's safe ids: never turned into keys or paths, only printed (in prompts and logs,
// where an escape sequence or NUL would do harm), so well-formed UTF-16 without C0 controls or DEL.
const ID_PATTERN = /^(?:[^\u0000-\u001f\u007f\ud800-\udfff]|[\ud800-\udbff][\udc00-\udfff])+$/;
// Free text may hold tabs and line breaks; other controls and lone surrogates are refused.
const TEXT_PATTERN =
  /^(?:[^\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\ud800-\udfff]|[\ud800-\udbff][\udc00-\udfff])*$/;
// A file or S3 object when the content store has an address for it, else the content's blob ref.
const CONTENT_URI_RULE =
  'must be a file:// or s3:// URI without spaces or control characters, or a "blob:sha256:<hex>" ref';
const CONTENT_URI_PATTERN = new RegExp(
  `^(?:(?:file|s3)://[^\\s\\u0000-\\u001f\\u007f]+|${BLOB_REF_PREFIX}[a-f0-9]{64})$`,
);
/** A SHA-256 digest as core writes it (`sha256Hex`). */
export const SHA256_HEX = /^[a-f0-9]{64}$/;

const WELL_FORMED = "must be well-formed text without control characters";
const MIME_RULE = 'must be a MIME type such as "text/markdown"';
const bounded = (max: number) => z.string().max(max, `must be at most ${max} characters`);
const text = (max: number, shape: RegExp, rule: string) => bounded(max).regex(shape, rule);
export const identifier = () => text(MAX_ID_CHARS, ID_PATTERN, WELL_FORMED).min(1, "must not be empty");
const freeText = (max: number) => text(max, TEXT_PATTERN, `${WELL_FORMED} other than tab and newline`);
const listOf = <T extends z.ZodType>(item: T) =>
  z.array(item).max(MAX_HOT_STATE_LIST_ITEMS, `must hold at most ${MAX_HOT_STATE_LIST_ITEMS} items`);
const textList = () => listOf(freeText(MAX_TEXT_CHARS));
const sha256Hex = () =>
  z.string().regex(SHA256_HEX, "must be 64 lowercase hex characters (a SHA-256 digest)");
const summary = () => freeText(MAX_CONTENT_SUMMARY_CHARS);

/** A MIME type as core's one parser reads it (`parseContentType`); kept as given. */
export const mimeType = () =>
  bounded(MAX_CONTENT_TYPE_LENGTH).refine((value) => parseContentType(value) !== undefined, MIME_RULE);

/** What referenced content is, for the model deciding whether to fetch it (the JSON field `type`). */
export const ContentKindSchema = z.enum(["repo", "doc", "code", "log", "data", "plan", "result"]);
export type ContentKind = z.infer<typeof ContentKindSchema>;
/** Who produced stored content. */
export const ContentProducerSchema = z.enum(["dispatcher", "executor", "planner", "system"]);
export type ContentProducer = z.infer<typeof ContentProducerSchema>;

/** A content ref: stored content as the hot state lists it (the JSON names are the wire names). */
export const ContentRefSchema = z.strictObject({
  artifact_id: sha256Hex(),
  type: ContentKindSchema,
  label: freeText(200).optional(),
  version: freeText(128).optional(),
  summary: summary().optional(),
});
export type ContentRef = z.infer<typeof ContentRefSchema>;

/** The hot state, in every dispatcher prompt. Lists are oldest first: shedding removes from the front. */
export const HotStateSchema = z.strictObject({
  session_id: identifier(),
  session_key: identifier().optional(),
  run_id: identifier().optional(),
  objective: freeText(MAX_TEXT_CHARS).optional(),
  current_plan_id: identifier().nullable().optional(),
  accepted_decisions: textList().optional(),
  open_questions: textList().optional(),
  constraints: textList().optional(),
  last_successful_step: freeText(MAX_TEXT_CHARS).optional(),
  risk_level: z.enum(["low", "medium", "high"]).optional(),
  artifact_index: listOf(ContentRefSchema).optional(),
});
export type HotState = z.infer<typeof HotStateSchema>;
export type RiskLevel = NonNullable<HotState["risk_level"]>;

/** The metadata of content in the registry, kept beside it: what makes content part of the registry. */
export const ContentRecordSchema = z
  .strictObject({
    artifact_id: sha256Hex(),
    type: ContentKindSchema,
    content_uri: text(MAX_CONTENT_URI_CHARS, CONTENT_URI_PATTERN, CONTENT_URI_RULE),
    content_hash: sha256Hex(),
    size_bytes: z.int().min(0),
    created_at: z.iso.datetime({ offset: true, message: "must be an ISO 8601 date-time" }),
    producer: ContentProducerSchema.optional(),
    summary: summary().optional(),
    mime: mimeType().optional(),
  })
  .refine((record) => record.content_hash === record.artifact_id, {
    message: "content_hash must equal artifact_id: the id is the SHA-256 of the content",
    path: ["content_hash"],
  });
export type ContentRecord = z.infer<typeof ContentRecordSchema>;

/** Metadata a caller gives with content it stores. */
export const ContentMetadataSchema = z.strictObject({
  type: ContentKindSchema.optional(),
  mime: mimeType().optional(),
  summary: summary().optional(),
  producer: ContentProducerSchema.optional(),
});

/** Parses `value` with `schema`; INVALID_INPUT naming every field that failed and why (`details.issues`). */
export function parseOrThrow<T extends z.ZodType>(schema: T, value: unknown, what: string): z.output<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = result.error.issues.map(({ path, message }) => ({
    path: z.core.toDotPath(path) || "(root)",
    message,
  }));
  const shown = issues.slice(0, MAX_ISSUES_IN_MESSAGE).map((issue) => `${issue.path}: ${issue.message}`);
  const more =
    issues.length > MAX_ISSUES_IN_MESSAGE ? ` (and ${issues.length - MAX_ISSUES_IN_MESSAGE} more)` : "";
  throw invalidInput(`${what} is invalid: ${shown.join("; ")}${more}`, { issues });
}

/** INVALID_INPUT with `message`: what was wrong with the input and what is accepted. */
export function invalidInput(message: string, details?: Record<string, unknown>): StowageError {
  return new StowageError("INVALID_INPUT", message, details ? { details } : {});
}

/** INVALID_INPUT saying what was expected and what came: `maxChars must be …, got "x"`. */
export const invalidValue = (expected: string, value: unknown) =>
  invalidInput(`${expected}, got ${describeValue(value)}`);
