#!/usr/bin/env node
// `stowage-mcp` as the workspace links it. pnpm links a package's bins at install, before anything
// is built, so a bin pointing into dist/ warns "Failed to create bin … ENOENT" on a fresh clone.
// This committed file runs the built bin when dist/ exists, else the TypeScript source through
// tsx (a devDependency of the repository root). The published package's bin is
// dist/bin/stowage-mcp.js (publishConfig.bin); this file is not published.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const built = new URL("../dist/bin/stowage-mcp.js", import.meta.url);
if (existsSync(built)) {
  await import(built.href);
} else {
  const source = fileURLToPath(new URL("../src/bin/stowage-mcp.ts", import.meta.url));
  const args = ["--import", import.meta.resolve("tsx"), "--conditions=@stowage/source", source];
  const run = spawnSync(process.execPath, [...args, ...process.argv.slice(2)], { stdio: "inherit" });
  process.exitCode = run.status ?? 1;
}
