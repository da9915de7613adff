// The package's own imports, read from its source (type-only imports included, which a loaded
// module graph would not show): the upload service and its HTTP handler share types through a
// file both import, and neither imports the other, directly or through another file.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SRC = fileURLToPath(new URL("../src/", import.meta.url));

/** `from "./x.js"`, `import "./x.js"`, `import("./x.js")`: relative specifiers only. */
const IMPORT = /(?:\bfrom\s*|\bimport\s*\(?\s*)["'](\.{1,2}\/[^"']+)["']/g;

/** Every source file of `src/` → the source files it imports (paths relative to `src/`). */
function importGraph(): Map<string, string[]> {
  const files = readdirSync(SRC, { recursive: true, encoding: "utf8" }).filter((file) =>
    file.endsWith(".ts"),
  );
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(join(SRC, file), "utf8");
    const imported = [...text.matchAll(IMPORT)].map((match) =>
      relative(SRC, resolve(SRC, dirname(file), match[1]!.replace(/\.js$/, ".ts"))),
    );
    graph.set(file, imported);
  }
  return graph;
}

/** Every file `from` reaches through its imports, itself excluded unless a circle leads back. */
function reachable(graph: Map<string, string[]>, from: string): Set<string> {
  const seen = new Set<string>();
  const stack = [...(graph.get(from) ?? [])];
  while (stack.length > 0) {
    const file = stack.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    stack.push(...(graph.get(file) ?? []));
  }
  return seen;
}

describe("the package's import graph", () => {
  const graph = importGraph();

  it("is read from the real files (the check can see an import)", () => {
    expect(graph.get("upload-service.ts")).toContain("upload-service-types.ts");
    expect(graph.get("upload-handler.ts")).toContain("upload-service-types.ts");
    expect(graph.get("agent/upload-file.ts")).toContain("protocol.ts");
  });

  it("upload-service.ts and upload-handler.ts do not import each other, directly or not", () => {
    expect(reachable(graph, "upload-service.ts").has("upload-handler.ts")).toBe(false);
    expect(reachable(graph, "upload-handler.ts").has("upload-service.ts")).toBe(false);
  });

  it("has no import circle at all", () => {
    const circles = [...graph.keys()].filter((file) => reachable(graph, file).has(file));
    expect(circles).toEqual([]);
  });
});
