// Regenerates test/fixtures/*.jsonl from their seeds: `pnpm --filter @stowage/thread-items fixtures`.
import { writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { buildFixtures } from "./fixtures.js";

for (const fixture of buildFixtures()) {
  const path = fileURLToPath(new URL(`../fixtures/${fixture.file}`, import.meta.url));
  await writeFile(path, fixture.jsonl);
  const lines = fixture.jsonl.split("\n").filter((line) => line !== "").length;
  console.log(`${fixture.file}: ${lines} lines, ${fixture.jsonl.length.toLocaleString("en-US")} bytes`);
}
