import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const src = resolve(dirname(fileURLToPath(import.meta.url)), "../src");

/** Every bare module the file imports, following relative imports. */
function externalImports(file: string, seen = new Set<string>()): Set<string> {
  const found = new Set<string>();
  if (seen.has(file)) return found;
  seen.add(file);
  const text = readFileSync(file, "utf8");
  for (const [, specifier] of text.matchAll(/^(?:import|export)[^"]*from "([^"]+)";/gm)) {
    if (specifier!.startsWith(".")) {
      const target = resolve(dirname(file), specifier!.replace(/\.js$/, ".ts"));
      for (const name of externalImports(target, seen)) found.add(name);
    } else found.add(specifier!);
  }
  return found;
}

describe("the ./agent entry", () => {
  it("imports no AWS SDK, so a devbox needs only Node and @stowage/core", () => {
    const imports = [...externalImports(resolve(src, "agent.ts"))].sort();
    expect(imports).toEqual(["@stowage/core", "node:crypto", "node:fs/promises", "node:path"]);
    // The main entry does need it: the check can tell the two apart.
    expect([...externalImports(resolve(src, "index.ts"))]).toContain("@aws-sdk/client-s3");
  });
});
