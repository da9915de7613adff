import { isSafeId } from "@stowage/core";
import { z } from "zod";

/** Longest thread item `id` accepted, in characters (core's safe-id characters, `:` included: `<uuid>:<block>`). */
export const MAX_ITEM_ID_LENGTH = 200;

/** Core's safe-id characters as a JSON Schema pattern (the refinement below is core's own check). */
const SAFE_ID_PATTERN = "^[A-Za-z0-9][A-Za-z0-9._:@-]*$";

/** A thread item id: a safe id of at most {@link MAX_ITEM_ID_LENGTH} characters. */
export const itemIdSchema = z
  .string()
  .min(1)
  .max(MAX_ITEM_ID_LENGTH)
  .refine((id) => isSafeId(id, MAX_ITEM_ID_LENGTH), {
    message: `must be letters, digits, ".", "_", ":", "@" or "-", starting with a letter or digit`,
  })
  // Refinements do not reach JSON Schema, which consumers in other languages validate with.
  .meta({ pattern: SAFE_ID_PATTERN });
