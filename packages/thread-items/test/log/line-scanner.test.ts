import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expectStowageError } from "@stowage/core/testing";
import { tempDirectory } from "@stowage/test-support";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { scanLines } from "../../src/log/line-scanner.js";

const base = await tempDirectory("stowage-line-scanner-");

async function scan(path: string, options: Parameters<typeof scanLines>[1]) {
  const lines: { number: number; text: string; complete: boolean }[] = [];
  for await (const line of scanLines(path, options))
    lines.push({ number: line.number, text: line.bytes.toString(), complete: line.complete });
  return lines;
}

/** What scanning must give, computed the obvious way. */
function expected(content: string, prefix: string | undefined) {
  const parts = content.split("\n");
  return parts
    .map((text, index) => ({ number: index + 1, text, complete: index < parts.length - 1 }))
    .filter(({ text }) => text !== "" && (prefix === undefined || text.startsWith(prefix)));
}

describe("scanLines", () => {
  it("yields nothing for a missing file", async () => {
    expect(await scan(join(base, "missing"), {})).toEqual([]);
  });

  it("finds every line and every prefix match, whatever the chunk boundaries", async () => {
    const line = fc.stringMatching(/^[ab{"é😀]{0,12}$/u);
    let file = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(line, { maxLength: 12 }),
        fc.boolean(),
        fc.constantFrom(undefined, "a", "ab", '{"', "é"),
        fc.integer({ min: 1, max: 9 }),
        async (lines, trailingNewline, prefix, chunkBytes) => {
          const content = lines.join("\n") + (trailingNewline ? "\n" : "");
          const path = join(base, `file-${file++}`);
          await writeFile(path, content);
          const options = { chunkBytes, ...(prefix === undefined ? {} : { prefix: Buffer.from(prefix) }) };
          expect(await scan(path, options)).toEqual(expected(content, prefix));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("fails with ABORTED when the signal fires", async () => {
    const path = join(base, "abort");
    await writeFile(path, "a\nb\n");
    await expectStowageError(scan(path, { signal: AbortSignal.abort() }), "ABORTED");
  });
});
