import { z } from "zod";
import { ArtifactTypeSchema } from "./hot-state-schema.js";
import { contentUri, freeText, MAX_ARTIFACT_SUMMARY_CHARS, mimeType, sha256Hex } from "./text-fields.js";

/** Who produced an artifact. */
export const ARTIFACT_PRODUCERS = ["dispatcher", "executor", "planner", "system"] as const;
export type ArtifactProducer = (typeof ARTIFACT_PRODUCERS)[number];

export const ArtifactProducerSchema = z.enum(ARTIFACT_PRODUCERS);

/** The full metadata of a stored artifact, kept beside its content. */
export const ArtifactRecordSchema = z
  .strictObject({
    artifact_id: sha256Hex(),
    type: ArtifactTypeSchema,
    content_uri: contentUri(),
    content_hash: sha256Hex(),
    size_bytes: z.int().min(0),
    created_at: z.iso.datetime({ offset: true, message: "must be an ISO 8601 date-time" }),
    producer: ArtifactProducerSchema.optional(),
    summary: freeText(MAX_ARTIFACT_SUMMARY_CHARS).optional(),
    mime: mimeType().optional(),
  })
  .refine((record) => record.content_hash === record.artifact_id, {
    message: "content_hash must equal artifact_id: an artifact's id is the SHA-256 of its content",
    path: ["content_hash"],
  });
export type ArtifactRecord = z.infer<typeof ArtifactRecordSchema>;
