import { createBlobStore } from "@stowage/blob-store";
import { createMemoryObjectStore, StowageError } from "@stowage/core";
import { expectStowageError, HOSTILE_KEYS } from "@stowage/core/testing";
import { beforeEach, describe, expect, it } from "vitest";
import { buildBootstrapContext } from "../../src/bootstrap/build-bootstrap-context.js";
import { DEFAULT_BOOTSTRAP_THRESHOLD_CHARS } from "../../src/budget/context-budget.js";
import { type ContentRegistry, createContentRegistry } from "../../src/content/content-registry.js";
import { createArtifactsGetTool } from "../../src/tool/artifacts-get-tool.js";
import { captureLogger } from "../capture-logger.js";

let registry: ContentRegistry;
beforeEach(() => {
  registry = createContentRegistry({
    content: createBlobStore({ store: createMemoryObjectStore() }),
    records: createMemoryObjectStore(),
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
    const tool = createArtifactsGetTool({ registry, maxChars: 100_000 });
    expect((await tool.execute({ artifact_id: match[1] })).content).toBe(agents);
  });

  it("shows a head/tail excerpt of about 2,000 characters, the default budget's inline limit", async () => {
    const content = `HEAD-MARKER ${big(30_000)} TAIL-MARKER`;
    const context = await buildBootstrapContext([{ path: "docs/guide.md", content }], { registry });
    const excerpt = context.text.split("Summary (head/tail excerpt):\n")[1]!;
    expect(excerpt.startsWith("HEAD-MARKER")).toBe(true);
    expect(excerpt.endsWith("TAIL-MARKER")).toBe(true);
    expect(excerpt).toMatch(
      /…\[28\d\d\d chars omitted; call artifacts_get with artifact_id [a-f0-9]{64} for the full file\]…/,
    );
    // The marker included: the excerpt is inline text and the budget allows 2,000 characters.
    expect(excerpt.length).toBeLessThanOrEqual(2000);
    expect(excerpt.length).toBeGreaterThan(1990);
    // A smaller budget cuts the excerpt to it.
    const narrow = await buildBootstrapContext([{ path: "docs/guide.md", content }], {
      registry,
      budget: { maxInlineArtifactChars: 1500 },
    });
    expect(narrow.text.split("Summary (head/tail excerpt):\n")[1]!.length).toBeLessThanOrEqual(1500);
  });

  it("with the defaults, never inlines a file the default budget refuses inline", async () => {
    // 7,999 characters: under the design document's example threshold of 8,000, over the budget.
    const file = big(7_999);
    const context = await buildBootstrapContext([{ path: "AGENTS.md", content: file }], { registry });
    expect(context.files[0]!.mode).toBe("ref");
    expect(context.largestInlineChars).toBe(0);
    // A configured threshold above the budget does not inline it either; the budget decides.
    const configured = await buildBootstrapContext([{ path: "AGENTS.md", content: file }], {
      registry,
      thresholdChars: 8_000,
    });
    expect(configured.files[0]!.mode).toBe("ref");
    // A larger budget lets it inline again.
    const roomy = await buildBootstrapContext([{ path: "AGENTS.md", content: file }], {
      registry,
      thresholdChars: 8_000,
      budget: { maxInlineArtifactChars: 8_000 },
    });
    expect(roomy.files[0]!.mode).toBe("inline");
  });

  it.each([
    [2000, "the default"],
    [500, "a small budget"],
    [60, "a budget too small for the marker's pointer (the count alone is shown)"],
    [12, "a budget too small for any marker (the head alone)"],
  ])("keeps the excerpt, marker included, within maxInlineArtifactChars %i (%s)", async (limit) => {
    const content = `HEAD ${big(30_000)} TAIL`;
    for (const text of [content, "😀".repeat(20_000)]) {
      const context = await buildBootstrapContext([{ path: "docs/guide.md", content: text }], {
        registry,
        budget: { maxInlineArtifactChars: limit },
      });
      const excerpt = context.text.split("Summary (head/tail excerpt):\n")[1]!;
      expect(excerpt.length).toBeLessThanOrEqual(limit);
      expect(excerpt.length).toBeGreaterThanOrEqual(limit - 2);
      expect((excerpt as string & { isWellFormed(): boolean }).isWellFormed()).toBe(true);
    }
  });

  it("cuts the excerpt on whole characters", async () => {
    const content = "😀".repeat(10_000);
    const context = await buildBootstrapContext([{ path: "emoji.txt", content }], {
      registry,
      budget: { maxInlineArtifactChars: 1001 },
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

  it("skips a file over the registry cap with its reason and an excerpt, and builds the rest", async () => {
    const small = createContentRegistry({
      content: createBlobStore({ store: createMemoryObjectStore() }),
      records: createMemoryObjectStore(),
      maxBytes: 10_000,
    });
    const huge = `HUGE-HEAD ${big(20_000)} HUGE-TAIL`;
    const context = await buildBootstrapContext(
      [
        { path: "HUGE.md", content: huge },
        { path: "AGENTS.md", content: big(5_000) },
        { path: "SOUL.md", content: "be kind" },
      ],
      { registry: small },
    );
    expect(context.files.map((file) => [file.path, file.mode])).toEqual([
      ["HUGE.md", "skipped"],
      ["AGENTS.md", "ref"],
      ["SOUL.md", "inline"],
    ]);
    expect(context.files[0]).toMatchObject({ reason: "TOO_LARGE", chars: huge.length });
    expect(context).toMatchObject({ refFiles: 1, skippedFiles: 1 });
    const section = context.text.split("## AGENTS.md")[0]!;
    expect(section).toContain("HUGE-HEAD");
    expect(section).toContain("HUGE-TAIL");
    expect(section).not.toContain("ArtifactRef:");
    expect(section.length).toBeLessThan(2_500);
  });

  it("still fails the context for a storage failure other than size, naming the file", async () => {
    const broken = {
      ...registry,
      storeText: async () => {
        throw new StowageError("UNAVAILABLE", "content store is down");
      },
    } as ContentRegistry;
    const err = await expectStowageError(
      buildBootstrapContext([{ path: "AGENTS.md", content: big(5_000) }], { registry: broken }),
      "UNAVAILABLE",
    );
    expect(err.details).toEqual({ path: "AGENTS.md" });
  });

  it.each(HOSTILE_KEYS)("refuses the file path $why", async ({ value }) => {
    await expectStowageError(
      buildBootstrapContext([{ path: value as string, content: "x" }], { registry }),
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
    await expectStowageError(buildBootstrapContext(files as never, { registry }), "INVALID_INPUT");
  });

  it("refuses a bad configuration", async () => {
    const files = [{ path: "a.md", content: "x" }];
    await expectStowageError(buildBootstrapContext(files, { enabled: true }), "INVALID_INPUT");
    await expectStowageError(buildBootstrapContext(files, { registry, thresholdChars: 0 }), "INVALID_INPUT");
    await expectStowageError(
      buildBootstrapContext(files, { registry, budget: { maxInlineArtifactChars: -1 } }),
      "INVALID_INPUT",
    );
    await expectStowageError(
      buildBootstrapContext(files, { registry, enabled: "yes" as never }),
      "INVALID_INPUT",
    );
  });
});
