import { describeValue, pathSegmentProblem, StowageError } from "@stowage/core";
import { and, eq, type SQL } from "drizzle-orm";
import type { StowageDatabase } from "./database.js";
import { blobs } from "./schema.js";

/** What every operation of one PostgreSQL ObjectStore works with: its options, checked. */
export interface ObjectStoreContext {
  db: StowageDatabase;
  /** The store's scope in the `blobs` table. */
  namespace: string;
  maxObjectBytes: number;
}

/** The row of `key` in the context's namespace. */
export function rowOf(context: ObjectStoreContext, key: string): SQL {
  return and(eq(blobs.namespace, context.namespace), eq(blobs.key, key))!;
}

/** The namespace used when none is given, by the object store and the metrics log. */
export const DEFAULT_OBJECT_NAMESPACE = "default";

/** A namespace, checked to be one path segment (INVALID_INPUT otherwise). */
export function assertNamespace(namespace: string): string {
  const problem = pathSegmentProblem(namespace);
  if (problem)
    throw new StowageError("INVALID_INPUT", `namespace ${problem}, got ${describeValue(namespace)}`);
  return namespace;
}
