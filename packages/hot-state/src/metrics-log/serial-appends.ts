import type { OperationOptions } from "@stowage/core";
import type { PromptMetrics } from "../metrics/prompt-metrics.js";
import {
  type AppendPromptMetricsOptions,
  type PromptMetricsEntry,
  toPromptMetricsEntry,
} from "./prompt-metrics-entry.js";

/**
 * The `append` of a metrics log: checks the metrics once, before any I/O (the session names
 * where the entry goes), then runs `appendChecked` for the appends of one session in this process
 * one after another (they would only race each other for turns).
 */
export function serialAppends(
  now: () => Date,
  appendChecked: (
    session: string,
    checked: PromptMetricsEntry,
    op: OperationOptions,
  ) => Promise<PromptMetricsEntry>,
) {
  const queues = new Map<string, Promise<unknown>>();
  return async (metrics: PromptMetrics, op: AppendPromptMetricsOptions = {}): Promise<PromptMetricsEntry> => {
    const { hotStateVersion, ...operation } = op;
    const checked = toPromptMetricsEntry(metrics, { turn: 1, recordedAt: now(), hotStateVersion });
    const session = checked.session;
    const run = () => appendChecked(session, checked, operation);
    const next = (queues.get(session) ?? Promise.resolve()).then(run, run);
    const settled = next.catch(() => {});
    queues.set(session, settled);
    void settled.then(() => {
      if (queues.get(session) === settled) queues.delete(session);
    });
    return next;
  };
}
