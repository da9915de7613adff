import { installedPackages, runChild } from "@stowage/test-support";
import { describe, expect, it } from "vitest";

const child = new URL("./children/loaded-modules.ts", import.meta.url);

/** Every module URL that importing `specifier` resolves, in a fresh Node process. */
async function resolvedModules(specifier: string): Promise<string[]> {
  const result = await runChild(child, [specifier]);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as string[];
}

describe("the import graph", () => {
  // The proof that the check sees the SDK when it is there: storage-s3 loads it.
  it("of @stowage/storage-s3 loads @aws-sdk/* (the check can see it)", async () => {
    expect(installedPackages(await resolvedModules("@stowage/storage-s3"))).toContain("@aws-sdk/client-s3");
  });

  it.each([
    ["@stowage/uploads", "../src/upload-service.ts"],
    ["@stowage/uploads/agent", "../src/agent/upload-file.ts"],
  ])(
    "of %s loads no installed package at all, so no @aws-sdk/*: only Node and @stowage/core",
    async (entry, file) => {
      const urls = await resolvedModules(entry);
      // The child walked the real graph: the entry's own files and core's are in it.
      expect(urls).toContain(new URL(file, import.meta.url).href);
      expect(urls.some((url) => url.endsWith("/packages/core/src/index.ts"))).toBe(true);
      expect(installedPackages(urls)).toEqual([]);
      expect(urls.filter((url) => !url.startsWith("node:") && !url.includes("/packages/"))).toEqual([]);
    },
  );
});
