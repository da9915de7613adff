import {
  type CheckpointSaverOptions,
  createCheckpointSaver,
  type StowageCheckpointSaver,
} from "@stowage/sessions/backend";
import { assertDatabase, type StowageDatabase } from "../database.js";
import { assertNamespace, DEFAULT_OBJECT_NAMESPACE } from "../object-store-context.js";
import { checkpointRows } from "./checkpoint-rows.js";

/** Options of `createPostgresCheckpointSaver`. */
export interface PostgresCheckpointSaverOptions extends CheckpointSaverOptions {
  /** A database with Stowage's tables (migration 0011 adds `langgraph_*`). */
  db: StowageDatabase;
  /** Scopes the threads: savers with different namespaces share the tables, never a thread. Default `default`. */
  namespace?: string;
}

/**
 * A LangGraph.js checkpoint saver (`BaseCheckpointSaver`) on PostgreSQL or PGlite: a checkpoint is
 * one row of `langgraph_checkpoints`, each channel value one row of `langgraph_values` (once per
 * channel and version), each pending write one row of `langgraph_writes`; a put, a putWrites and a
 * getTuple are one statement each. Thread ids are Stowage session ids. Same semantics, options and
 * blob handling as `createObjectCheckpointSaver` of `@stowage/sessions/langgraph`.
 */
export function createPostgresCheckpointSaver(
  options: PostgresCheckpointSaverOptions,
): StowageCheckpointSaver {
  const db = assertDatabase(options?.db, "createPostgresCheckpointSaver");
  const namespace = assertNamespace(options.namespace ?? DEFAULT_OBJECT_NAMESPACE);
  return createCheckpointSaver(checkpointRows(db, namespace), options);
}
