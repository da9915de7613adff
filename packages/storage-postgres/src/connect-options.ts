import { describeValue, StowageError } from "@stowage/core";
import { DEFAULT_SCHEMA, SCHEMA_NAME_PATTERN } from "./database.js";

/** Validates a schema option; returns it or the default. */
export function resolveSchema(schema: unknown): string {
  if (schema === undefined) return DEFAULT_SCHEMA;
  if (typeof schema !== "string" || !SCHEMA_NAME_PATTERN.test(schema)) {
    throw new StowageError(
      "INVALID_INPUT",
      `schema must be 1 to 63 of a-z, 0-9 and _, not starting with a digit, got ${describeValue(schema)}`,
    );
  }
  return schema;
}

/** Imports an optional peer dependency, or says exactly what to install. */
export async function importPeer<T>(name: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (err) {
    throw new StowageError(
      "UNAVAILABLE",
      `${name} is not installed; add it to your dependencies to use this`,
      {
        cause: err,
        reason: "PEER_MISSING",
      },
    );
  }
}
