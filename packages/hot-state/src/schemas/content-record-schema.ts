import { z } from "zod";
import { ContentKindSchema } from "./hot-state-schema.js";
import { contentUri, freeText, MAX_CONTENT_SUMMARY_CHARS, mimeType, sha256Hex } from "./text-fields.js";

/** Who produced stored content. */
export const CONTENT_PRODUCERS = ["dispatcher", "executor", "planner", "system"] as const;
/** One of {@link CONTENT_PRODUCERS}. */
export type ContentProducer = (typeof CONTENT_PRODUCERS)[number];

export const ContentProducerSchema = z.enum(CONTENT_PRODUCERS);

/**
 * The full metadata of content in the registry, kept beside it: what makes content part of the
 * registry. `artifact_id` is the design document's wire name for the content's SHA-256.
 */
export const ContentRecordSchema = z
  .strictObject({
    artifact_id: sha256Hex(),
    type: ContentKindSchema,
    content_uri: contentUri(),
    content_hash: sha256Hex(),
    size_bytes: z.int().min(0),
    created_at: z.iso.datetime({ offset: true, message: "must be an ISO 8601 date-time" }),
    producer: ContentProducerSchema.optional(),
    summary: freeText(MAX_CONTENT_SUMMARY_CHARS).optional(),
    mime: mimeType().optional(),
  })
  .refine((record) => record.content_hash === record.artifact_id, {
    message: "content_hash must equal artifact_id: the id is the SHA-256 of the content",
    path: ["content_hash"],
  });
/** A content registry's record (see {@link ContentRecordSchema}). */
export type ContentRecord = z.infer<typeof ContentRecordSchema>;
