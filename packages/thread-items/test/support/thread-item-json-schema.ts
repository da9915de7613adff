import { z } from "zod";
import { threadItemSchema } from "../../src/schema/thread-item-schema.js";

/**
 * JSON Schema (draft 2020-12) of a thread item, as zod writes it: the schema test checks that a
 * validator in another language, given it, accepts and refuses what `parseThreadItem` does. A
 * plain post's `metadata.type` must be absent, which zod spells `undefined` and JSON Schema `not: {}`.
 */
export const THREAD_ITEM_JSON_SCHEMA: Record<string, unknown> = z.toJSONSchema(threadItemSchema, {
  unrepresentable: "any",
  override(context) {
    if (context.zodSchema._zod.def.type === "undefined") context.jsonSchema.not = {};
  },
});
