import { z } from "zod";
import { ContentRecordSchema } from "./content-record-schema.js";
import { ContentRefSchema, HotStateSchema } from "./hot-state-schema.js";

/** A JSON Schema (draft 2020-12) document as a plain object. */
export type JsonSchema = Record<string, unknown>;

function exported(schema: z.ZodType): Readonly<JsonSchema> {
  return Object.freeze(z.toJSONSchema(schema, { io: "input" }) as JsonSchema);
}

/** {@link HotStateSchema} as JSON Schema, for other languages and for structured-output prompts. */
export const HOT_STATE_JSON_SCHEMA = /* @__PURE__ */ exported(HotStateSchema);
/** {@link ContentRefSchema} as JSON Schema. */
export const CONTENT_REF_JSON_SCHEMA = /* @__PURE__ */ exported(ContentRefSchema);
/** {@link ContentRecordSchema} as JSON Schema. */
export const CONTENT_RECORD_JSON_SCHEMA = /* @__PURE__ */ exported(ContentRecordSchema);
