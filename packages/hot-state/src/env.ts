// `@stowage/hot-state/env`: the settings readers alone, which load no schema (zod) and no
// tokenizer, so that an app reads its configuration without loading the package.
export { type BootstrapEnvOptions, bootstrapOptionsFromEnv } from "./bootstrap/bootstrap-env.js";
export { type HotStateStoreEnvOptions, hotStateStoreOptionsFromEnv } from "./store/hot-state-env.js";
