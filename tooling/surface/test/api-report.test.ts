import { describe, expect, it } from "vitest";
import { portable } from "../src/api-report.js";

// The reports are compared with what a clean clone generates in CI: nothing of this clone's paths
// may be in them (a stale report failed CI once over a vitest path under /work/main).
describe("portable", () => {
  it.each([
    [
      'Promise<typeof import("/work/main/node_modules/.pnpm/vitest@4.1.12_x/node_modules/vitest/dist/index")>',
      'Promise<typeof import("vitest/dist/index")>',
    ],
    [
      'import("/home/u/repo/node_modules/.pnpm/@aws-sdk+client-s3@3_x/node_modules/@aws-sdk/client-s3")',
      'import("@aws-sdk/client-s3")',
    ],
    ['import("/ci/node_modules/zod")', 'import("zod")'],
    ['import("vitest")', 'import("vitest")'],
    // The number moved from 123 to 124 when sessions gained two dependencies: a stale report.
    ["__@asyncDispose@124: () => Promise<void>;", "[Symbol.asyncDispose]: () => Promise<void>;"],
  ])("%s → %s", (declaration, expected) => {
    expect(portable(declaration)).toBe(expected);
  });
});
