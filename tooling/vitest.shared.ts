import { defineConfig } from "vitest/config";

/**
 * One test configuration for every package: tests run against `src/` through the
 * `@stowage/source` export condition, so `pnpm test` needs no build.
 */
export function stowageVitestConfig(overrides: { testTimeout?: number } = {}) {
  // No "module" condition: it selects ESM builds (the AWS SDK's dist-es) that Node itself cannot load.
  const conditions = ["@stowage/source", "node", "import", "default"];
  return defineConfig({
    resolve: { conditions },
    ssr: { resolve: { conditions, externalConditions: ["@stowage/source"] } },
    test: {
      include: ["src/**/*.test.ts", "test/**/*.test.ts"],
      testTimeout: overrides.testTimeout ?? 30_000,
      hookTimeout: 60_000,
      pool: "forks",
    },
  });
}
