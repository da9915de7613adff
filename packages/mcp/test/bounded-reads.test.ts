// Every read is bounded and every "how to get more" leads somewhere: pages that fit, slices of
// lines too long for a read, values extracted from outputs larger than a result, thread pages
// cut by bytes, resources/list pages.
import { Buffer } from "node:buffer";
import { expectStowageError } from "@stowage/core/testing";
import { createContentRegistry } from "@stowage/hot-state";
import { tempDirectory } from "@stowage/test-support";
import { textItem } from "@stowage/thread-items";
import { afterEach, describe, expect, it } from "vitest";
import { MAX_RESOURCE_READ_BYTES, MAX_TOOL_RESULT_BYTES } from "../src/resources/paged-read.js";
import {
  connectedFixture,
  connectInMemory,
  sessionFixture,
  stowageErrorOf,
  textOf,
} from "./session-fixture.js";

const base = await tempDirectory("stowage-mcp-bounds-");
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

const setUp = (overrides = {}) => connectedFixture(base, closers, overrides);

/** `n` lines of exactly `bytes` bytes each (newline included): `0001xxxx…\n`. */
const fixedLines = (n: number, bytes: number) =>
  Array.from({ length: n }, (_, i) => `${String(i + 1).padStart(4, "0")}${"x".repeat(bytes - 5)}\n`).join("");

interface ToolPage {
  text: string;
  lines?: { first: number; last: number; hasMore: boolean };
  chars?: { first: number; end: number; total: number };
  next_offset?: number | null;
  next_char_offset?: number | null;
}

describe("read_artifact", () => {
  it("returns the lines that fit the result bound, and the offset that goes on, until the end", async () => {
    const { client, session } = await setUp();
    // 600 lines of 1,024 bytes: the default page of 500 lines is 512,000 bytes, over 256 KiB.
    const id = await session.artifacts.saveArtifact("bash", fixedLines(600, 1024));
    const first = await client.callTool({ name: "read_artifact", arguments: { id } });
    expect(first.isError).toBeFalsy();
    // Half the page, 250 lines (256,000 bytes), is what fits 262,144.
    expect(first.structuredContent).toMatchObject({
      lines: { first: 1, last: 250, hasMore: true },
      next_offset: 251,
    });
    expect(
      textOf(first).endsWith("[artifact://2: lines 1–250; more: call read_artifact again with offset=251]"),
    ).toBe(true);
    const seen: string[] = [];
    let args: Record<string, unknown> = { id };
    for (let calls = 0; calls < 10; calls++) {
      const page = (await client.callTool({ name: "read_artifact", arguments: args }))
        .structuredContent as ToolPage;
      expect(Buffer.byteLength(page.text)).toBeLessThanOrEqual(MAX_TOOL_RESULT_BYTES);
      seen.push(page.text);
      if (page.next_offset === null) break;
      args = { id, offset: page.next_offset };
    }
    expect(seen.join("")).toBe(fixedLines(600, 1024));
    expect(seen).toHaveLength(3);
  });

  it("reads a line longer than a result in slices of characters, then the next line", async () => {
    const { client, session } = await setUp();
    const long = `${"a".repeat(2 * 1024 * 1024)}\n`;
    const id = await session.artifacts.saveArtifact("bash", `${long}tail\n`);
    const first = await client.callTool({ name: "read_artifact", arguments: { id } });
    expect(first.structuredContent).toMatchObject({
      chars: { first: 0, end: 262_144, total: 2_097_153 },
      next_offset: 1,
      next_char_offset: 262_144,
    });
    expect(textOf(first)).toContain(
      "[artifact://2: line 1, characters 0–262144 of 2097153; more: call read_artifact again with offset=1 and char_offset=262144]",
    );
    let text = "";
    let args: Record<string, unknown> = { id };
    let calls = 0;
    for (; calls < 20; calls++) {
      const page = (await client.callTool({ name: "read_artifact", arguments: args }))
        .structuredContent as ToolPage;
      text += page.text;
      if (page.next_offset === null) break;
      args = {
        id,
        offset: page.next_offset,
        ...(page.next_char_offset ? { char_offset: page.next_char_offset } : {}),
      };
    }
    expect(text).toBe(`${long}tail\n`);
    // 2,097,153 characters in slices of 262,144 are 9 slices, then "tail\n".
    expect(calls + 1).toBe(10);
  });

  it("never cuts a character: slices of multi-byte text stay within the bound and join back", async () => {
    const { client, session } = await setUp();
    // 4-byte characters (two UTF-16 units each) and 2-byte ones, 1.5 MB in one line.
    const line = `${"😀é".repeat(250_000)}\n`;
    const id = await session.artifacts.saveArtifact("bash", line);
    let text = "";
    let args: Record<string, unknown> = { id };
    for (let calls = 0; calls < 40; calls++) {
      const page = (await client.callTool({ name: "read_artifact", arguments: args }))
        .structuredContent as ToolPage;
      expect(Buffer.byteLength(page.text)).toBeLessThanOrEqual(MAX_TOOL_RESULT_BYTES);
      expect(page.text).not.toMatch(/[\ud800-\udbff]$/);
      text += page.text;
      if (page.next_offset === null) break;
      args = { id, offset: page.next_offset, char_offset: page.next_char_offset };
    }
    expect(text).toBe(line);
  });

  it("refuses a char_offset past the end of the line, and char_offset with a page", async () => {
    const { client } = await setUp();
    await expectStowageError(
      stowageErrorOf(client.callTool({ name: "read_artifact", arguments: { id: 0, char_offset: 99 } })),
      "INVALID_INPUT",
      "OFFSET_PAST_END",
    );
    await expectStowageError(
      stowageErrorOf(
        client.callTool({ name: "read_artifact", arguments: { id: 1, limit: 5, char_offset: 1 } }),
      ),
      "INVALID_INPUT",
      "INVALID_READ_OPTION",
    );
  });
});

describe("query_agent_output", () => {
  it("extracts a value from a JSON output larger than a result, and slices a large value", async () => {
    const { client, session } = await setUp();
    const blob = "y".repeat(400_000);
    await session.artifacts.writeAgentOutput("2-Big", JSON.stringify({ findings: [{ file: "b.ts" }], blob }));
    const small = await client.callTool({
      name: "query_agent_output",
      arguments: { id: "2-Big", path: "findings/0/file" },
    });
    expect(small.isError, textOf(small)).toBeFalsy();
    expect(textOf(small)).toBe("b.ts");

    const first = await client.callTool({
      name: "query_agent_output",
      arguments: { id: "2-Big", q: ".blob" },
    });
    expect(first.structuredContent).toMatchObject({
      chars: { first: 0, end: 262_144, total: 400_000 },
      next_char_offset: 262_144,
    });
    expect(textOf(first)).toContain(
      "more: call query_agent_output again with the same path or q and char_offset=262144]",
    );
    const rest = await client.callTool({
      name: "query_agent_output",
      arguments: { id: "2-Big", q: ".blob", char_offset: 262_144 },
    });
    expect(rest.structuredContent).toMatchObject({
      chars: { first: 262_144, end: 400_000, total: 400_000 },
      next_char_offset: null,
    });
    expect((first.structuredContent as ToolPage).text + (rest.structuredContent as ToolPage).text).toBe(blob);
  });
});

describe("resources", () => {
  it("answers a whole read too large with a page that fits, which then reads", async () => {
    const { client, session } = await setUp();
    // 2,000 lines of 1,024 bytes: 2,048,000 bytes, over 1 MiB.
    const id = await session.artifacts.saveArtifact("bash", fixedLines(2000, 1024));
    const err = await expectStowageError(
      stowageErrorOf(client.readResource({ uri: `artifact://${id}` })),
      "TOO_LARGE",
      "READ_TOO_LARGE",
    );
    expect(err.details).toMatchObject({ next: { offset: 1, limit: 500 } });
    expect(err.message).toContain(`artifact://${id}?offset=1&limit=500`);
    const page = await client.readResource({ uri: `artifact://${id}?offset=1&limit=500` });
    expect(page.contents[0]!._meta).toMatchObject({
      lines: { first: 1, last: 500, hasMore: true },
      next: `artifact://${id}?offset=501&limit=500`,
    });
  });

  it("returns fewer lines than a page asks when they would pass the bound, and keeps the page size in next", async () => {
    const { client, session } = await setUp();
    const id = await session.artifacts.saveArtifact("bash", fixedLines(2000, 1024));
    const read = await client.readResource({ uri: `artifact://${id}?offset=1&limit=2000` });
    expect(Buffer.byteLength(textOf(read))).toBeLessThanOrEqual(MAX_RESOURCE_READ_BYTES);
    expect(read.contents[0]!._meta).toMatchObject({
      lines: { first: 1, last: 1000, hasMore: true },
      next: `artifact://${id}?offset=1001&limit=2000`,
    });
  });

  it("names a slice when the first line alone is too large, and the slices read on", async () => {
    const { client, session } = await setUp();
    const long = `${"b".repeat(3 * 1024 * 1024)}\n`;
    const id = await session.artifacts.saveArtifact("bash", long);
    const err = await expectStowageError(
      stowageErrorOf(client.readResource({ uri: `artifact://${id}` })),
      "TOO_LARGE",
      "READ_TOO_LARGE",
    );
    expect(err.message).toContain(`artifact://${id}?offset=1&char_offset=0`);
    let uri: string | undefined = `artifact://${id}?offset=1&char_offset=0`;
    let text = "";
    while (uri) {
      const read = await client.readResource({ uri });
      text += textOf(read);
      uri = (read.contents[0]!._meta as { next?: string }).next;
    }
    expect(text).toBe(long);
  });

  it("bounds a thread page by bytes and pages on from the last item it holds", async () => {
    const { client, threads, thread } = await setUp();
    // The fixture's 2 items, then 10 of about 300 KB: 3 of those fit 1 MiB with room for the envelope.
    for (let n = 0; n < 10; n++) {
      await threads.post(thread, textItem(`${n}:${"z".repeat(300_000)}`), { author: "user:alice" });
    }
    const texts: string[] = [];
    let uri: string | undefined = "thread://main";
    let reads = 0;
    while (uri) {
      const read = await client.readResource({ uri });
      reads++;
      expect(Buffer.byteLength(textOf(read))).toBeLessThanOrEqual(MAX_RESOURCE_READ_BYTES);
      const body = JSON.parse(textOf(read)) as { items: { content: { text: string }[] }[]; next?: string };
      expect(body.items.length).toBeGreaterThan(0);
      texts.push(...body.items.map((item) => item.content[0]!.text.slice(0, 12)));
      uri = body.next;
    }
    expect(texts).toEqual([
      "first item",
      "second item ",
      ...Array.from({ length: 10 }, (_, n) => `${n}:zzzzzzzzzz`),
    ]);
    // 2 small + 1 big, then 3 big a read: 4 reads.
    expect(reads).toBe(4);
  });

  it("refuses a thread page of more than 100 items", async () => {
    const { client } = await setUp();
    await expectStowageError(
      stowageErrorOf(client.readResource({ uri: "thread://main?limit=101" })),
      "INVALID_INPUT",
      "INVALID_READ_OPTION",
    );
  });

  it("checks a content ref's size on its record, before loading it", async () => {
    const fixture = await sessionFixture(base);
    // A registry that takes content larger than a read (the default takes 512 KiB at most).
    const large = createContentRegistry({
      content: fixture.blobs,
      records: fixture.shared,
      prefix: "content-refs/",
      maxBytes: 2 * MAX_RESOURCE_READ_BYTES,
    });
    const { record } = await large.storeText("c".repeat(MAX_RESOURCE_READ_BYTES + 1));
    let loads = 0;
    const registry = {
      ...large,
      get: async (...args: Parameters<typeof large.get>) => {
        loads++;
        return large.get(...args);
      },
    };
    const { client, close } = await connectInMemory({ ...fixture.options, registry });
    closers.push(close);
    await expectStowageError(
      stowageErrorOf(client.readResource({ uri: `content-ref://${record.artifact_id}` })),
      "TOO_LARGE",
      "READ_TOO_LARGE",
    );
    expect(loads).toBe(0);
  });

  it("lists every resource across pages with nextCursor, each once", async () => {
    const { client, session } = await setUp();
    for (let n = 0; n < 1000; n++) await session.artifacts.saveArtifact("bash", `${n}\n`);
    const uris: string[] = [];
    const sizes: number[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listResources(cursor === undefined ? {} : { cursor });
      sizes.push(page.resources.length);
      uris.push(...page.resources.map((r) => r.uri));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    // 1,002 artifacts, 2 agent outputs, a thread, a content ref and the hot state.
    expect(sizes).toEqual([500, 500, 7]);
    expect(new Set(uris).size).toBe(1007);
    expect(uris.slice(0, 3)).toEqual(["artifact://0", "artifact://1", "artifact://2"]);
    expect(uris.slice(1000)).toEqual([
      "artifact://1000",
      "artifact://1001",
      "agent://0-Explore",
      "agent://1-Report",
      "thread://main",
      expect.stringMatching(/^content-ref:\/\/[0-9a-f]{64}$/),
      "hot-state://latest",
    ]);
  });
});
