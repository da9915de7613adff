import { execFile } from "node:child_process";
import { cp, readdir } from "node:fs/promises";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { STOWAGE_MIGRATIONS_FOLDER } from "../src/database.js";

const packageDir = fileURLToPath(new URL("..", import.meta.url));
const scratch = await tempDirectory("stowage-migrations-");

describe("committed migrations", () => {
  it("match src/schema.ts: drizzle-kit generate finds nothing to add", async () => {
    const out = join(scratch, "drizzle");
    await cp(STOWAGE_MIGRATIONS_FOLDER, out, { recursive: true });
    const before = (await readdir(out)).sort();
    const kit = join(packageDir, "node_modules", ".bin", "drizzle-kit");
    const { stdout, stderr } = await promisify(execFile)(
      kit,
      [
        "generate",
        "--dialect",
        "postgresql",
        "--schema",
        "./src/schema.ts",
        "--out",
        relative(packageDir, out),
      ],
      { cwd: packageDir },
    );
    expect(stdout + stderr).toMatch(/No schema changes/);
    expect((await readdir(out)).sort()).toEqual(before);
  });
});
