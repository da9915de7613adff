import { execFile } from "node:child_process";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { readMigrationFiles } from "drizzle-orm/migrator";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import { readDrizzleMigrations } from "../scripts/embed-migrations.ts";
import { STOWAGE_MIGRATIONS_FOLDER } from "../src/database.js";
import { EMBEDDED_MIGRATIONS } from "../src/migrations.generated.js";

const PACKAGE_DIR = join(STOWAGE_MIGRATIONS_FOLDER, "..");

describe("embedded migrations", () => {
  it("are drizzle/ as drizzle reads it: regenerate with `pnpm db:embed` when this fails", async () => {
    // drizzle's own reader is the oracle: same statements, hashes and journal times.
    const fromDrizzle = readMigrationFiles({ migrationsFolder: STOWAGE_MIGRATIONS_FOLDER });
    expect(EMBEDDED_MIGRATIONS.map(({ tag: _tag, ...meta }) => meta)).toEqual(fromDrizzle);
    expect(EMBEDDED_MIGRATIONS).toEqual(await readDrizzleMigrations());
  });

  it("migrate a PGlite database from an esbuild bundle that has no drizzle/ beside it", async () => {
    // Inside the package's node_modules so that the bundle finds the peers it leaves external,
    // and far from drizzle/: a bundle that still read the folder would fail here.
    const dir = join(PACKAGE_DIR, "node_modules", ".bundle-test", String(process.pid));
    await mkdir(dir, { recursive: true });
    try {
      const entry = join(dir, "main.ts");
      await writeFile(
        entry,
        [
          // The package's entry, as an application's bundler meets it (sources through @stowage/source).
          `import { connectEmbedded } from ${JSON.stringify(join(PACKAGE_DIR, "src", "index.ts"))};`,
          'import { sql } from "drizzle-orm";',
          "const connection = await connectEmbedded();",
          // The table the README names, where Stowage records the migrations it applied.
          'const result = await connection.db.execute(sql.raw("SELECT count(*)::int AS n FROM stowage_migrations"));',
          "console.log(JSON.stringify(result.rows[0]));",
          "await connection.close();",
        ].join("\n"),
      );
      const outfile = join(dir, "main.mjs");
      await build({
        entryPoints: [entry],
        outfile,
        bundle: true,
        platform: "node",
        format: "esm",
        conditions: ["@stowage/source"],
        // PGlite loads its WebAssembly beside its own files; pg has native options. Both stay packages.
        external: ["@electric-sql/pglite", "pg"],
        banner: {
          js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
        },
        logLevel: "silent",
      });
      const { stdout } = await promisify(execFile)(process.execPath, [outfile], {
        cwd: dir,
        timeout: 60_000,
      });
      expect(JSON.parse(stdout.trim())).toEqual({ n: EMBEDDED_MIGRATIONS.length });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
