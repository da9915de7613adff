import { open, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expectStowageError } from "@stowage/core/testing";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { LINE_SCAN_CHUNK_BYTES, readLines, readWhole } from "../../src/read/read-lines.js";
import { checkReadOptions } from "../../src/read/read-options.js";

const base = await tempDirectory("stowage-artifacts-lines-");
let count = 0;
const decoder = new TextDecoder();

async function withFile<T>(
  content: string | Uint8Array,
  fn: (handle: import("node:fs/promises").FileHandle) => Promise<T>,
) {
  const path = join(base, `file-${count++}`);
  await writeFile(path, content);
  const handle = await open(path, "r");
  try {
    return await fn(handle);
  } finally {
    await handle.close();
  }
}

/** What a page must be, computed the naive way. */
function expectedPage(content: string, offset: number, limit: number) {
  const parts = content.split(/(?<=\n)/).filter((line) => line !== "");
  return parts.slice(offset - 1, offset - 1 + limit).join("");
}

describe("readLines", () => {
  const content = "one\ntwo\nthree\nfour\nfive";

  it.each([
    [1, 2, "one\ntwo\n", { first: 1, last: 2, hasMore: true }],
    [2, 2, "two\nthree\n", { first: 2, last: 3, hasMore: true }],
    [4, 10, "four\nfive", { first: 4, last: 5, hasMore: false, totalLines: 5 }],
    [5, 1, "five", { first: 5, last: 5, hasMore: false, totalLines: 5 }],
    [1, 5, content, { first: 1, last: 5, hasMore: false, totalLines: 5 }],
  ])("offset %i limit %i", async (offset, limit, text, lines) => {
    const page = await withFile(content, (handle) => readLines(handle, { offset, limit }, 1 << 20, "f"));
    expect(decoder.decode(page.bytes)).toBe(text);
    expect(page.lines).toEqual(lines);
  });

  it("reports the last line of a file ending with a newline, and hasMore exactly", async () => {
    const page = await withFile("a\nb\n", (handle) => readLines(handle, { offset: 1, limit: 2 }, 100, "f"));
    expect(page.lines).toEqual({ first: 1, last: 2, hasMore: false });
    const err = await expectStowageError(
      withFile("a\nb\n", (handle) => readLines(handle, { offset: 3, limit: 1 }, 100, "f")),
      "INVALID_INPUT",
      "OFFSET_PAST_END",
    );
    expect(err.details).toEqual({ offset: 3, totalLines: 2 });
  });

  it("returns an empty page for offset 1 of an empty file, and fails past it", async () => {
    const page = await withFile("", (handle) => readLines(handle, { offset: 1, limit: 10 }, 100, "f"));
    expect(page.bytes.byteLength).toBe(0);
    expect(page.lines).toEqual({ first: 1, last: 0, hasMore: false, totalLines: 0 });
    await expectStowageError(
      withFile("", (handle) => readLines(handle, { offset: 2, limit: 1 }, 100, "f")),
      "INVALID_INPUT",
      "OFFSET_PAST_END",
    );
  });

  it("matches a naive split for lines crossing the scan chunks", async () => {
    const longLine = `${"L".repeat(LINE_SCAN_CHUNK_BYTES + 123)}\n`;
    const text = `${"short\n".repeat(1000)}${longLine}${Array.from({ length: 300_000 }, (_, i) => `row ${i}\n`).join("")}tail`;
    await withFile(text, async (handle) => {
      for (const [offset, limit] of [
        [1, 3],
        [999, 3],
        [1001, 1],
        [1002, 5],
        [150_000, 100],
        [301_001, 1],
        [301_000, 50],
      ] as const) {
        const page = await readLines(handle, { offset, limit }, 4 * LINE_SCAN_CHUNK_BYTES, "f");
        expect(decoder.decode(page.bytes)).toBe(expectedPage(text, offset, limit));
      }
    });
  });

  it("fails with TOO_LARGE instead of gathering more than maxBytes", async () => {
    await expectStowageError(
      withFile(`${"x".repeat(5000)}\n`, (handle) => readLines(handle, { offset: 1, limit: 1 }, 4096, "f")),
      "TOO_LARGE",
      "READ_TOO_LARGE",
    );
  });

  it("stops when the signal fires", async () => {
    const controller = new AbortController();
    controller.abort();
    await expectStowageError(
      withFile("a\n", (handle) => readLines(handle, { offset: 1, limit: 1 }, 100, "f", controller.signal)),
      "ABORTED",
    );
  });
});

describe("readWhole", () => {
  it("reads a file and refuses one over maxBytes", async () => {
    const bytes = await withFile("abc", (handle) => readWhole(handle, 3, "f"));
    expect(decoder.decode(bytes)).toBe("abc");
    await expectStowageError(
      withFile("abcd", (handle) => readWhole(handle, 3, "f")),
      "TOO_LARGE",
      "READ_TOO_LARGE",
    );
  });

  it("reads past a stale size hint (a file that grew since it was opened) and still bounds it", async () => {
    const bytes = await withFile("abcdef", (handle) => readWhole(handle, 6, "f", undefined, 2));
    expect(decoder.decode(bytes)).toBe("abcdef");
    await expectStowageError(
      withFile("abcdefg", (handle) => readWhole(handle, 6, "f", undefined, 2)),
      "TOO_LARGE",
      "READ_TOO_LARGE",
    );
  });

  it("reads on after a short read before the size it was given (as some network file systems return)", async () => {
    const content = new TextEncoder().encode("0123456789");
    const reads: number[] = [];
    // A file handle that returns at most 3 bytes per read.
    const handle = {
      async read(buffer: Uint8Array, offset: number, length: number, position: number) {
        const bytes = content.subarray(position, position + Math.min(length, 3));
        buffer.set(bytes, offset);
        reads.push(bytes.byteLength);
        return { bytesRead: bytes.byteLength, buffer };
      },
    } as unknown as import("node:fs/promises").FileHandle;
    expect(decoder.decode(await readWhole(handle, 100, "f", undefined, 10))).toBe("0123456789");
    expect(reads).toEqual([3, 3, 3, 1]);
  });
});

describe("checkReadOptions", () => {
  it("defaults", () => {
    expect(checkReadOptions({})).toEqual({ page: undefined, maxBytes: 16 * 1024 * 1024 });
    expect(checkReadOptions({ limit: 5 }).page).toEqual({ offset: 1, limit: 5 });
    expect(checkReadOptions({ offset: 7 }).page).toEqual({ offset: 7, limit: Number.MAX_SAFE_INTEGER });
  });

  it.each([
    { offset: 0 },
    { offset: -1 },
    { offset: 1.5 },
    { offset: Number.NaN },
    { offset: Number.POSITIVE_INFINITY },
    { offset: "2" },
    { limit: 0 },
    { limit: 2 ** 60 },
    { maxBytes: 0 },
    { maxBytes: 2 ** 40 },
  ])("rejects %j", async (options) => {
    await expectStowageError(
      () => checkReadOptions(options as never),
      "INVALID_INPUT",
      "INVALID_READ_OPTION",
    );
  });
});
