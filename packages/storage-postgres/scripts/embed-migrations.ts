/**
 * `pnpm db:embed` (run by `pnpm db:generate` after drizzle-kit): writes
 * `src/migrations.generated.ts` from `drizzle/`, so that the migrations travel inside the
 * package's JavaScript and a bundled application needs no `drizzle/` folder at run time.
 * A test fails when the generated module is older than `drizzle/`.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { EmbeddedMigration } from "../src/embedded-migration.ts";

const PACKAGE_DIR = fileURLToPath(new URL("..", import.meta.url));
export const DRIZZLE_DIR = join(PACKAGE_DIR, "drizzle");
export const GENERATED_MODULE = join(PACKAGE_DIR, "src", "migrations.generated.ts");

interface JournalEntry {
  tag: string;
  when: number;
  breakpoints: boolean;
}

/** The migrations of a drizzle-kit folder, read the way drizzle's `readMigrationFiles` reads them. */
export async function readDrizzleMigrations(folder = DRIZZLE_DIR): Promise<EmbeddedMigration[]> {
  const journal = JSON.parse(await readFile(join(folder, "meta", "_journal.json"), "utf8")) as {
    entries: JournalEntry[];
  };
  const migrations: EmbeddedMigration[] = [];
  for (const entry of journal.entries) {
    const text = await readFile(join(folder, `${entry.tag}.sql`), "utf8");
    migrations.push({
      tag: entry.tag,
      folderMillis: entry.when,
      hash: createHash("sha256").update(text).digest("hex"),
      bps: entry.breakpoints,
      sql: text.split("--> statement-breakpoint"),
    });
  }
  return migrations;
}

/** The module's source: one exported array (Biome formats it after writing). */
export function renderMigrationsModule(migrations: readonly EmbeddedMigration[]): string {
  const items = migrations.map((migration) => {
    const statements = migration.sql.map((statement) => `      ${JSON.stringify(statement)},`).join("\n");
    return [
      "  {",
      `    tag: ${JSON.stringify(migration.tag)},`,
      `    folderMillis: ${migration.folderMillis},`,
      `    hash: ${JSON.stringify(migration.hash)},`,
      `    bps: ${migration.bps},`,
      "    sql: [",
      statements,
      "    ],",
      "  },",
    ].join("\n");
  });
  return [
    "// Generated from drizzle/ by `pnpm db:embed` (scripts/embed-migrations.ts). Do not edit.",
    'import type { EmbeddedMigration } from "./embedded-migration.js";',
    "",
    "/** Stowage's migrations in journal order, embedded so that a bundled application can apply them. */",
    "export const EMBEDDED_MIGRATIONS: readonly EmbeddedMigration[] = [",
    ...items,
    "];",
    "",
  ].join("\n");
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const migrations = await readDrizzleMigrations();
  await writeFile(GENERATED_MODULE, renderMigrationsModule(migrations));
  // The repository's formatter, so that the committed module passes the lint as written.
  execFileSync(join(PACKAGE_DIR, "../../node_modules/.bin/biome"), ["format", "--write", GENERATED_MODULE], {
    stdio: "inherit",
  });
  console.log(`wrote ${migrations.length} migrations to src/migrations.generated.ts`);
}
