import { createMemoryObjectStore } from "@stowage/core";
import { HOSTILE_KEYS } from "@stowage/core/testing";
import { beforeEach, describe, expect, it } from "vitest";
import { captureLogger } from "../../test/capture-logger.js";
import { codeOf } from "../../test/codes.js";
import { type ArtifactRegistry, createArtifactRegistry } from "../artifacts/artifact-registry.js";
import { createArtifactsGetTool } from "../tool/artifacts-get-tool.js";
import { buildBootstrapContext, DEFAULT_BOOTSTRAP_THRESHOLD_CHARS } from "./build-bootstrap-context.js";

let registry: ArtifactRegistry;
beforeEach(() => {
  registry = createArtifactRegistry({
    store: createMemoryObjectStore(),
    baseUri: "s3://bucket/",
    logger: captureLogger(),
  });
});

const big = (chars: number, seed = "AGENTS") => {
  const line = `${seed}: follow the repository conventions and run the tests before committing.\n`;
  return line.repeat(Math.ceil(chars / line.length)).slice(0, chars);
};

const REF_LINE =
  /^ArtifactRef: ([a-f0-9]{64}) \(type=([^,]+), sha256=([a-f0-9]{64}), bytes=(\d+), createdAt=(\d{4}-\d\d-\d\dT[\d:.]+Z)\)$/m;

describe("buildBootstrapContext", () => {
  it("inlines files under the threshold and references files at or over it", async () => {
    const agents = big(DEFAULT_BOOTSTRAP_THRESHOLD_CHARS);
    const soul = big(DEFAULT_BOOTSTRAP_THRESHOLD_CHARS - 1, "SOUL");
    const context = await buildBootstrapContext(
      [
        { path: "AGENTS.md", content: agents },
        { path: "SOUL.md", content: soul },
      ],
      { registry },
    );
    expect(context.files.map((file) => [file.path, file.mode, file.chars])).toEqual([
      ["AGENTS.md", "ref", agents.length],
      ["SOUL.md", "inline", soul.length],
    ]);
    expect(context.refFiles).toBe(1);
    expect(context.largestInlineChars).toBe(soul.length);
    expect(context.text).toContain(`## SOUL.md\n\n${soul}`);
    expect(context.text).not.toContain(agents);

    const match = REF_LINE.exec(context.text)!;
    const ref = context.files[0]!;
    if (ref.mode !== "ref") throw new Error("expected a ref");
    expect(match[1]).toBe(ref.record.artifact_id);
    expect(match[2]).toBe("text/markdown");
    expect(match[3]).toBe(ref.record.artifact_id);
    expect(Number(match[4])).toBe(Buffer.byteLength(agents));
    expect(match[5]).toBe(ref.record.created_at);
    expect(context.text).toContain("Summary (head/tail excerpt):");

    // The model can fetch the full file with the tool.
    const tool = createArtifactsGetTool(registry, { maxChars: 100_000 });
    expect((await tool.execute({ artifact_id: match[1] })).content).toBe(agents);
  });

  it("shows a head/tail excerpt of about 4,000 characters", async () => {
    const content = `HEAD-MARKER ${big(30_000)} TAIL-MARKER`;
    const context = await buildBootstrapContext([{ path: "docs/guide.md", content }], { registry });
    const excerpt = context.text.split("Summary (head/tail excerpt):\n")[1]!;
    expect(excerpt.startsWith("HEAD-MARKER")).toBe(true);
    expect(excerpt.endsWith("TAIL-MARKER")).toBe(true);
    expect(excerpt).toMatch(
      /…\[26\d\d\d chars omitted; call artifacts_get with artifact_id [a-f0-9]{64} for the full file\]…/,
    );
    expect(excerpt.length).toBeGreaterThan(4000);
    expect(excerpt.length).toBeLessThan(4200);
  });

  it("cuts the excerpt on whole characters", async () => {
    const content = "😀".repeat(10_000);
    const context = await buildBootstrapContext([{ path: "emoji.txt", content }], {
      registry,
      excerptChars: 1001,
    });
    const excerpt = context.text.split("Summary (head/tail excerpt):\n")[1]!;
    const [head, tail] = excerpt.split(/\n…\[.*\]…\n/) as [string, string];
    expect(head.length % 2).toBe(0);
    expect(tail.length % 2).toBe(0);
    expect(/^(?:😀)+$/u.test(head) && /^(?:😀)+$/u.test(tail)).toBe(true);
  });

  it("inlines everything when refs are disabled or no registry is given", async () => {
    const content = big(20_000);
    for (const options of [{ registry, enabled: false }, {}]) {
      const context = await buildBootstrapContext([{ path: "AGENTS.md", content }], options);
      expect(context.refFiles).toBe(0);
      expect(context.text).toBe(`## AGENTS.md\n\n${content}`);
    }
    expect((await registry.list()).items).toEqual([]);
  });

  it("honours a configured threshold and MIME type", async () => {
    const context = await buildBootstrapContext(
      [{ path: "notes", content: "0123456789", mime: "text/x-notes" }],
      {
        registry,
        thresholdChars: 10,
      },
    );
    expect(context.refFiles).toBe(1);
    expect(context.text).toContain("(type=text/x-notes,");
  });

  it("stores a repeated file once", async () => {
    const content = big(9000);
    await buildBootstrapContext([{ path: "a.md", content }], { registry });
    await buildBootstrapContext([{ path: "b.md", content }], { registry });
    expect((await registry.list()).items).toHaveLength(1);
  });

  it("fails with TOO_LARGE, naming the file, when a file is over the registry cap", async () => {
    const small = createArtifactRegistry({
      store: createMemoryObjectStore(),
      baseUri: "s3://b/",
      maxBytes: 10_000,
    });
    const err = await buildBootstrapContext([{ path: "HUGE.md", content: big(20_000) }], {
      registry: small,
    }).catch((error: unknown) => error as Error);
    expect(await codeOf(Promise.reject(err))).toBe("TOO_LARGE");
    expect((err as Error).message).toContain("HUGE.md");
  });

  it.each(HOSTILE_KEYS)("refuses the file path $why", async ({ value }) => {
    expect(await codeOf(buildBootstrapContext([{ path: value as string, content: "x" }], { registry }))).toBe(
      "INVALID_INPUT",
    );
  });

  it.each([
    { files: [{ path: "a.md" }], why: "a file without content" },
    { files: [{ path: "a.md", content: 5 }], why: "non-text content" },
    { files: [{ path: "a.md", content: "x", mode: "raw" }], why: "an unknown field" },
    { files: [{ path: "a.md", content: "x", mime: "bad mime" }], why: "a malformed MIME type" },
    {
      files: [
        { path: "a.md", content: "x" },
        { path: "a.md", content: "y" },
      ],
      why: "the same path twice",
    },
    { files: "AGENTS.md", why: "a string instead of a list" },
    { files: Array(300).fill({ path: "a", content: "" }), why: "too many files" },
  ])("refuses $why", async ({ files }) => {
    expect(await codeOf(buildBootstrapContext(files as never, { registry }))).toBe("INVALID_INPUT");
  });

  it("refuses a bad configuration", async () => {
    const files = [{ path: "a.md", content: "x" }];
    expect(await codeOf(buildBootstrapContext(files, { enabled: true }))).toBe("INVALID_INPUT");
    expect(await codeOf(buildBootstrapContext(files, { registry, thresholdChars: 0 }))).toBe("INVALID_INPUT");
    expect(await codeOf(buildBootstrapContext(files, { registry, excerptChars: -1 }))).toBe("INVALID_INPUT");
    expect(await codeOf(buildBootstrapContext(files, { registry, enabled: "yes" as never }))).toBe(
      "INVALID_INPUT",
    );
  });
});
