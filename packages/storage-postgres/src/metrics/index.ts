// `@stowage/storage-postgres/metrics`: `@stowage/hot-state`'s prompt metrics log on the
// `prompt_metrics` table. Needs `@stowage/hot-state` installed (an optional peer), which loads zod.
export {
  createPostgresPromptMetricsLog,
  type PostgresPromptMetricsLogOptions,
} from "./prompt-metrics-log.js";
