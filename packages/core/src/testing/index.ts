export type { DirectTransferConformanceOptions } from "./direct-transfer-conformance.js";
export { expectStowageError } from "./expect-stowage-error.js";
export {
  HOSTILE_KEYS,
  HOSTILE_PREFIXES,
  HOSTILE_REFS,
  type HostileInput,
  UNUSUAL_SAFE_KEYS,
} from "./hostile-keys.js";
export { type IntegrationEnv, integrationEnv, runningInCi } from "./integration-env.js";
export { loadVitest } from "./load-vitest.js";
export { describeNotifierConformance, type NotifierConformanceOptions } from "./notifier-conformance.js";
export {
  describeObjectStoreConformance,
  type ObjectStoreConformanceOptions,
} from "./object-store-conformance.js";
export { type RecordedWarning, recordingLogger } from "./recording-logger.js";
export { seededRandom } from "./seeded-random.js";
