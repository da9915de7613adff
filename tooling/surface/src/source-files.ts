import { readdirSync } from "node:fs";
import { join } from "node:path";

/** A package's published TypeScript source: `src/**` without tests. */
export function sourceFiles(dir: string): string[] {
  const files: string[] = [];
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts")) files.push(path);
    }
  };
  walk(join(dir, "src"));
  return files.sort();
}
