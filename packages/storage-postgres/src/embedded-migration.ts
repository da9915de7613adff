/**
 * One of Stowage's migrations as shipped inside the package's JavaScript (`migrations.generated.ts`),
 * so that a bundle of an application (esbuild, Rollup…) migrates without `drizzle/` on disk.
 * The fields are drizzle's `MigrationMeta`: a migration has the same hash and journal time
 * whichever way it is read.
 */
export interface EmbeddedMigration {
  /** The file name without `.sql`, e.g. `0000_initial`. */
  tag: string;
  /** The journal time (`when` in `drizzle/meta/_journal.json`): what `stowage_migrations` records. */
  folderMillis: number;
  /** SHA-256 (hex) of the `.sql` file, as drizzle computes it. */
  hash: string;
  /** Whether drizzle-kit wrote `--> statement-breakpoint` markers. */
  bps: boolean;
  /** The statements, split at the breakpoints. */
  sql: string[];
}
