import type { OperationOptions } from "@stowage/core";
import type { PromptMetrics } from "../metrics/prompt-metrics.js";
import {
  type AppendPromptMetricsOptions,
  type PromptMetricsEntry,
  toPromptMetricsEntry,
} from "./prompt-metrics-entry.js";

/** Writes one checked entry (turn 1 until placed) to its session's log; returns it as stored. */
export type AppendChecked = (
  session: string,
  checked: PromptMetricsEntry,
  operation: OperationOptions,
) => Promise<PromptMetricsEntry>;

/**
 * The `append` of a metrics log: checks the metrics once, before any I/O (the session names
 * where the entry goes), then runs the appends of one session in this process one after another
 * (they would only race each other for turns).
 */
export function serialAppends(now: () => Date, appendChecked: AppendChecked) {
  const queues = new Map<string, Promise<unknown>>();
  return function append(
    metrics: PromptMetrics,
    op: AppendPromptMetricsOptions = {},
  ): Promise<PromptMetricsEntry> {
    let checked: PromptMetricsEntry;
    try {
      checked = toPromptMetricsEntry(metrics, {
        turn: 1,
        recordedAt: now(),
        hotStateVersion: op.hotStateVersion,
      });
    } catch (err) {
      return Promise.reject(err);
    }
    const session = checked.session;
    const { hotStateVersion: _version, ...operation } = op;
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
