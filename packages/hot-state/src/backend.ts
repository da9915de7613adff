// `@stowage/hot-state/backend`: what another implementation of `PromptMetricsLog` (PostgreSQL's)
// checks entries and `series` options with, so that every log keeps and reads the same entries.
export {
  type PromptMetricsEntryPlace,
  PromptMetricsEntrySchema,
  type PromptMetricsSeriesWindow,
  promptMetricsSeriesWindow,
  toPromptMetricsEntry,
} from "./metrics-log/prompt-metrics-entry.js";
