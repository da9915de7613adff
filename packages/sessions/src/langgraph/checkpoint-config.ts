import type { RunnableConfig } from "@langchain/core/runnables";
import { assertSessionId, describeValue, StowageError } from "@stowage/core";

/** Longest checkpoint id, in UTF-8 bytes (LangGraph's are 36-character UUIDs). */
export const MAX_CHECKPOINT_ID_BYTES = 120;
/** Longest checkpoint namespace, in UTF-8 bytes (subgraph paths: `node:<task id>|…`). */
export const MAX_NAMESPACE_BYTES = 4096;

type Configurable = Record<string, unknown>;

const configurableOf = (config: RunnableConfig | undefined): Configurable | undefined =>
  config?.configurable as Configurable | undefined;

/** The thread id of `config`, checked as a Stowage session id (a thread is a session); undefined when absent. */
export function threadIdOf(config: RunnableConfig | undefined): string | undefined {
  const threadId = configurableOf(config)?.thread_id;
  if (threadId === undefined || threadId === null) return undefined;
  assertSessionId(threadId, "thread_id");
  return threadId;
}

/** The thread id `config` must carry for a write: INVALID_INPUT when it has none. */
export function requireThreadId(config: RunnableConfig | undefined, operation: string): string {
  if (configurableOf(config) === undefined) {
    throw new StowageError("INVALID_INPUT", `${operation}: config.configurable is missing`);
  }
  const threadId = threadIdOf(config);
  if (threadId === undefined) {
    throw new StowageError(
      "INVALID_INPUT",
      `${operation}: config.configurable.thread_id is missing (pass { configurable: { thread_id } })`,
    );
  }
  return threadId;
}

/** The namespace `config` gives, checked; undefined when it gives none (`list` then reads every namespace). */
export function givenNamespaceOf(config: RunnableConfig | undefined): string | undefined {
  const ns = configurableOf(config)?.checkpoint_ns;
  if (ns === undefined || ns === null) return undefined;
  if (typeof ns !== "string" || Buffer.byteLength(ns) > MAX_NAMESPACE_BYTES) {
    throw new StowageError(
      "INVALID_INPUT",
      `checkpoint_ns must be a string of at most ${MAX_NAMESPACE_BYTES} UTF-8 bytes, got ${describeValue(ns)}`,
      { details: { limit: MAX_NAMESPACE_BYTES } },
    );
  }
  return ns;
}

/** The namespace of `config`, checked: `""` (the root graph's) when it gives none. */
export const namespaceOf = (config: RunnableConfig | undefined): string => givenNamespaceOf(config) ?? "";

/** Throws INVALID_INPUT unless `id` is a checkpoint id this saver stores. */
export function assertCheckpointId(id: unknown, what = "checkpoint_id"): asserts id is string {
  if (typeof id !== "string" || id.length === 0 || Buffer.byteLength(id) > MAX_CHECKPOINT_ID_BYTES) {
    throw new StowageError(
      "INVALID_INPUT",
      `${what} must be a string of 1 to ${MAX_CHECKPOINT_ID_BYTES} UTF-8 bytes, got ${describeValue(id)}`,
      { details: { limit: MAX_CHECKPOINT_ID_BYTES } },
    );
  }
}

/** The checkpoint id of `config` (`checkpoint_id`, or the older `thread_ts`), checked; undefined when absent. */
export function checkpointIdOf(config: RunnableConfig | undefined): string | undefined {
  const configurable = configurableOf(config);
  const id = configurable?.checkpoint_id || configurable?.thread_ts || undefined;
  if (id === undefined) return undefined;
  assertCheckpointId(id);
  return id;
}

/** The config LangGraph gets back for a checkpoint: exactly its thread, namespace and id. */
export const checkpointConfig = (threadId: string, ns: string, id: string): RunnableConfig => ({
  configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: id },
});
