import { randomBytes } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { expectStowageError } from "@stowage/core/testing";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { scanSessionFilesForBlobRefs } from "../../src/gc/session-file-refs.js";

const dir = await tempDirectory("stowage-scan-");
const hash = (n: number) => n.toString(16).padStart(64, "0");
const collect = async (paths: string | string[]) => {
  const hashes: string[] = [];
  for await (const found of scanSessionFilesForBlobRefs(paths)) hashes.push(found);
  return [...new Set(hashes)].sort();
};

describe("scanSessionFilesForBlobRefs", () => {
  it("finds refs in plain and gzipped JSONL files anywhere under a directory", async () => {
    const root = join(dir, "sessions");
    await mkdir(join(root, "project-a"), { recursive: true });
    const line = (n: number) =>
      JSON.stringify({ message: { content: [{ type: "image", data: `blob:sha256:${hash(n)}` }] } });
    await writeFile(join(root, "project-a", "s1.jsonl"), `${line(1)}\n${line(2)}\n`);
    await writeFile(join(root, "s2.jsonl.gz"), gzipSync(`${line(3)}\n`));
    await writeFile(join(root, "notes.txt"), line(4));
    expect(await collect(root)).toEqual([hash(1), hash(2), hash(3)]);
    // A file named explicitly is scanned whatever its name, and gzip is told by content.
    await writeFile(join(dir, "oddly-named"), gzipSync(line(5)));
    expect(await collect([join(dir, "oddly-named"), join(root, "notes.txt")])).toEqual([hash(4), hash(5)]);
  });

  it("finds a ref that straddles a read-chunk boundary", async () => {
    const file = join(dir, "boundary.jsonl");
    // The default read chunk is 64 KiB: put the ref across it.
    const padding = "x".repeat(64 * 1024 - 20);
    await writeFile(file, `{"pad":"${padding}","data":"blob:sha256:${hash(9)}"}\n`);
    expect(await collect(file)).toEqual([hash(9)]);
  });

  it("finds data-URL-wrapped refs and ignores near misses", async () => {
    const file = join(dir, "mixed.jsonl");
    await writeFile(
      file,
      [
        `{"url":"data:image/png;base64,blob:sha256:${hash(11)}"}`,
        `{"bad":"blob:sha256:${hash(12).toUpperCase().replace(/0/g, "A")}"}`,
        `{"short":"blob:sha256:${hash(13).slice(1)}"}`,
      ].join("\n"),
    );
    expect(await collect(file)).toEqual([hash(11)]);
  });

  it("fails with NOT_FOUND for a missing path instead of yielding an empty root set", async () => {
    await expectStowageError(collect(join(dir, "missing")), "NOT_FOUND");
  });

  it("fails on a gzip file cut short, rather than returning the refs it could read", async () => {
    const file = join(dir, "broken.jsonl.gz");
    const full = gzipSync(randomBytes(200_000).toString("hex"));
    await writeFile(file, full.subarray(0, full.byteLength >> 1));
    await expect(collect(file)).rejects.toThrow();
  });
});
