import type { PGlite } from "@electric-sql/pglite";
import type { StowageConnection } from "../../src/database.js";

/** The PGlite instance under an embedded connection (drizzle keeps its client as `$client`). */
export const pgliteOf = (connection: StowageConnection) =>
  (connection.db as unknown as { $client: PGlite }).$client;
