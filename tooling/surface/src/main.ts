import { readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { apiReport, apiReportPath } from "./api-report.js";
import { MAX_FUNCTION_LINES, MAX_RUNTIME_EXPORTS, PACKAGE_BUDGETS } from "./budgets.js";
import { publishedPackages } from "./entries.js";
import { readExports } from "./exports.js";
import { functionSpans } from "./functions.js";
import { sourceFiles } from "./source-files.js";

// `pnpm surface`: prints the public surface of every published package. `--write` rewrites the
// API reports; `--check` (run by `pnpm lint`) fails when a report is stale or a budget is broken.
const root = join(import.meta.dirname, "../../..");
const mode = process.argv.includes("--write")
  ? "write"
  : process.argv.includes("--check")
    ? "check"
    : "print";

const packages = publishedPackages(root);
const entries = readExports(packages);
const problems: string[] = [];

const pad = (value: string | number, width: number) => String(value).padStart(width);
console.log(`${"entry".padEnd(44)} ${pad("runtime", 8)} ${pad("types", 6)}`);
let totalRuntime = 0;
let totalNames = 0;
for (const entry of entries) {
  const runtime = entry.names.filter((name) => name.runtime).length;
  totalRuntime += runtime;
  totalNames += entry.names.length;
  const label = entry.subpath === "." ? entry.packageName : `${entry.packageName}/${entry.subpath.slice(2)}`;
  console.log(`${label.padEnd(44)} ${pad(runtime, 8)} ${pad(entry.names.length - runtime, 6)}`);
  const rootBudget = PACKAGE_BUDGETS[entry.packageName]?.maxRootRuntimeExports;
  if (entry.subpath === "." && rootBudget !== undefined && runtime > rootBudget) {
    problems.push(`${entry.packageName}: ${runtime} root runtime exports, over its budget of ${rootBudget}`);
  }
}
console.log(`${"total".padEnd(44)} ${pad(totalRuntime, 8)} ${pad(totalNames - totalRuntime, 6)}`);
if (totalRuntime > MAX_RUNTIME_EXPORTS) {
  problems.push(`${totalRuntime} runtime exports in total, over the budget of ${MAX_RUNTIME_EXPORTS}`);
}

console.log(`\n${"package".padEnd(44)} ${pad("lines", 8)} ${pad("longest function", 40)}`);
let totalLines = 0;
const longest = [];
for (const pkg of packages) {
  const files = sourceFiles(pkg.dir);
  const lines = files.reduce((sum, file) => sum + readFileSync(file, "utf8").split("\n").length - 1, 0);
  totalLines += lines;
  const spans = functionSpans(root, files);
  const top = spans[0];
  console.log(`${pkg.name.padEnd(44)} ${pad(lines, 8)} ${pad(top ? `${top.name} ${top.lines}` : "-", 40)}`);
  longest.push(...spans.filter((span) => span.lines > MAX_FUNCTION_LINES));
  const lineBudget = PACKAGE_BUDGETS[pkg.name]?.maxSourceLines;
  if (lineBudget !== undefined && lines > lineBudget) {
    problems.push(`${pkg.name}: ${lines} lines of source, over its budget of ${lineBudget}`);
  }
}
console.log(`${"total".padEnd(44)} ${pad(totalLines, 8)}`);
for (const span of longest) {
  problems.push(`${span.where} ${span.name}: ${span.lines} lines, over ${MAX_FUNCTION_LINES}`);
}

for (const pkg of packages) {
  const path = apiReportPath(pkg);
  const report = apiReport(pkg, entries);
  if (mode === "write") writeFileSync(path, report);
  else if (mode === "check") {
    let stored = "";
    try {
      stored = readFileSync(path, "utf8");
    } catch {}
    if (stored !== report) {
      problems.push(`${relative(root, path)} is stale: run \`pnpm surface --write\` and review the change`);
    }
  }
}

if (problems.length > 0) {
  console.log(`\n${problems.length} over budget or stale:\n${problems.map((p) => `- ${p}`).join("\n")}`);
  if (mode === "check") process.exitCode = 1;
}
