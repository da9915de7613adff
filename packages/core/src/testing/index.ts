export { HOSTILE_KEYS, HOSTILE_PREFIXES, type HostileInput, UNUSUAL_SAFE_KEYS } from "./hostile-keys.js";
export { type IntegrationEnv, integrationEnv, runningInCi } from "./integration-env.js";
export {
  describeObjectStoreConformance,
  type ObjectStoreConformanceOptions,
} from "./object-store-conformance.js";
