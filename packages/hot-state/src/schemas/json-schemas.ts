import { z } from "zod";
import { ArtifactRecordSchema } from "./artifact-record-schema.js";
import { ArtifactIndexEntrySchema, HotStateSchema } from "./hot-state-schema.js";

/** A JSON Schema (draft 2020-12) document as a plain object. */
export type JsonSchema = Record<string, unknown>;

function exported(schema: z.ZodType): Readonly<JsonSchema> {
  return Object.freeze(z.toJSONSchema(schema, { io: "input" }) as JsonSchema);
}

/** {@link HotStateSchema} as JSON Schema, for other languages and for structured-output prompts. */
export const HOT_STATE_JSON_SCHEMA = /* @__PURE__ */ exported(HotStateSchema);
/** {@link ArtifactIndexEntrySchema} as JSON Schema. */
export const ARTIFACT_INDEX_ENTRY_JSON_SCHEMA = /* @__PURE__ */ exported(ArtifactIndexEntrySchema);
/** {@link ArtifactRecordSchema} as JSON Schema. */
export const ARTIFACT_RECORD_JSON_SCHEMA = /* @__PURE__ */ exported(ArtifactRecordSchema);
