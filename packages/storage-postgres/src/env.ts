// `@stowage/storage-postgres/env`: the settings reader alone, which loads neither the driver nor
// drizzle, so that an app reads its configuration without loading the database packages.
export type { ConnectPostgresOptions } from "./connect-postgres.js";
export { postgresOptionsFromEnv } from "./options-from-env.js";
