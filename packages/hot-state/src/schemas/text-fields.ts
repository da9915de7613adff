import { BLOB_REF_PREFIX, parseContentType } from "@stowage/core";
import { z } from "zod";

/** Longest identifier (`session_id`, `session_key`, `run_id`, `current_plan_id`), in UTF-16 code units. */
export const MAX_ID_CHARS = 256;
/** Longest free-text field of the hot state (objective, a decision, a question, a constraint, a step). */
export const MAX_HOT_STATE_TEXT_CHARS = 2_000;
/** Most items a hot-state list (`accepted_decisions`, `open_questions`, `constraints`, `artifact_index`) accepts as input. */
export const MAX_HOT_STATE_LIST_ITEMS = 200;
/** Longest content-ref `label`. */
export const MAX_LABEL_CHARS = 200;
/** Longest content-ref `version`. */
export const MAX_VERSION_CHARS = 128;
/** Longest `summary`, in a content ref and in a content record. */
export const MAX_CONTENT_SUMMARY_CHARS = 500;
/** Longest `content_uri`. */
const MAX_CONTENT_URI_CHARS = 2_048;

// Hot-state ids are free text by design (a session key such as "agent:main:sess 1" or a run id
// from another system), not core's safe ids: they are only ever printed, never turned into keys
// or paths. Well-formed UTF-16 (a surrogate only as half of a pair) without C0 controls or DEL:
// ids are printed in prompts and logs, where an escape sequence or NUL would do harm.
const ID_PATTERN = /^(?:[^\u0000-\u001f\u007f\ud800-\udfff]|[\ud800-\udbff][\udc00-\udfff])+$/;
// Free text may hold tabs and line breaks; other controls and lone surrogates are refused.
const TEXT_PATTERN =
  /^(?:[^\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\ud800-\udfff]|[\ud800-\udbff][\udc00-\udfff])*$/;
// Where the content is: a file or S3 object when the content store has an address for it, else
// the content's blob ref (`blob:sha256:<hex>`), which any content store resolves.
const CONTENT_URI_PATTERN = new RegExp(
  `^(?:(?:file|s3)://[^\\s\\u0000-\\u001f\\u007f]+|${BLOB_REF_PREFIX}[a-f0-9]{64})$`,
);

export const identifier = () =>
  z
    .string()
    .min(1, "must not be empty")
    .max(MAX_ID_CHARS, `must be at most ${MAX_ID_CHARS} characters`)
    .regex(ID_PATTERN, "must be well-formed text without control characters");

export const freeText = (max: number) =>
  z
    .string()
    .max(max, `must be at most ${max} characters`)
    .regex(TEXT_PATTERN, "must be well-formed text without control characters other than tab and newline");

export const textList = () =>
  z
    .array(freeText(MAX_HOT_STATE_TEXT_CHARS))
    .max(MAX_HOT_STATE_LIST_ITEMS, `must hold at most ${MAX_HOT_STATE_LIST_ITEMS} items`);

/** Longest content type core's `parseContentType` reads (its README: 255 characters). */
const MAX_CONTENT_TYPE_LENGTH = 255;
/** A SHA-256 digest as core writes it (`sha256Hex`): 64 lowercase hex characters. */
const SHA256_HEX = /^[a-f0-9]{64}$/;

export const sha256Hex = () =>
  z.string().regex(SHA256_HEX, "must be 64 lowercase hex characters (a SHA-256 digest)");

/** A MIME type as core's one parser reads it (`parseContentType`); kept as given. */
export const mimeType = () =>
  z
    .string()
    .max(MAX_CONTENT_TYPE_LENGTH, `must be at most ${MAX_CONTENT_TYPE_LENGTH} characters`)
    .refine((value) => parseContentType(value) !== undefined, 'must be a MIME type such as "text/markdown"');

export const contentUri = () =>
  z
    .string()
    .max(MAX_CONTENT_URI_CHARS, `must be at most ${MAX_CONTENT_URI_CHARS} characters`)
    .regex(
      CONTENT_URI_PATTERN,
      'must be a file:// or s3:// URI without spaces or control characters, or a "blob:sha256:<hex>" ref',
    );
