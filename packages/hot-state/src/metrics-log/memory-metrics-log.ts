import { assertSafeId, type OperationOptions, throwIfAborted } from "@stowage/core";
import type { PromptMetrics } from "../metrics/prompt-metrics.js";
import {
  type AppendPromptMetricsOptions,
  type PromptMetricsEntry,
  type PromptMetricsLog,
  type PromptMetricsSeriesOptions,
  promptMetricsSeriesWindow,
  toPromptMetricsEntry,
} from "./prompt-metrics-entry.js";

/** Options of `createMemoryPromptMetricsLog`: the clock of `recorded_at` (default `new Date()`). */
export interface MemoryPromptMetricsLogOptions {
  now?: () => Date;
}

/**
 * A metrics log in this process's memory, for tests and examples: it checks and numbers entries as
 * every log does and forgets them at exit (a deployment's is `@stowage/storage-postgres/metrics`).
 */
export function createMemoryPromptMetricsLog(options: MemoryPromptMetricsLogOptions = {}): PromptMetricsLog {
  const now = options.now ?? (() => new Date());
  const sessions = new Map<string, PromptMetricsEntry[]>();
  return Object.freeze({
    async append(metrics: PromptMetrics, { hotStateVersion, signal }: AppendPromptMetricsOptions = {}) {
      throwIfAborted(signal, "append prompt metrics");
      const session = metrics?.record?.session;
      const turn = (sessions.get(session)?.length ?? 0) + 1;
      const entry = toPromptMetricsEntry(metrics, { turn, recordedAt: now(), hotStateVersion });
      sessions.set(entry.session, [...(sessions.get(entry.session) ?? []), entry]);
      return entry;
    },
    async series(sessionId: string, op: PromptMetricsSeriesOptions = {}) {
      assertSafeId(sessionId, "sessionId");
      const { afterTurn, limit } = promptMetricsSeriesWindow(op);
      return (sessions.get(sessionId) ?? []).slice(afterTurn, afterTurn + limit);
    },
    async deleteSession(sessionId: string, { signal }: OperationOptions = {}) {
      assertSafeId(sessionId, "sessionId");
      throwIfAborted(signal, "delete prompt metrics");
      sessions.delete(sessionId);
    },
  });
}
