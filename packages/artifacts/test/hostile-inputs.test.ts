// One table of hostile inputs per public entry point: each must fail with a clear StowageError
// (or be sanitized into the session directory) and leave nothing outside that directory.
import { mkdir, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  createArtifactStore,
  createInternalUrlRouter,
  createOutputSink,
  moveSession,
} from "@stowage/artifacts";
import { expectStowageError } from "@stowage/core/testing";
import { filesUnder, tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { CLAIMS_DIR_NAME } from "../src/ids/claims.js";
import { artifactsDirFor } from "../src/layout/session-dir.js";
import { MAX_QUERY_LENGTH } from "../src/read/json-extract.js";
import { MAX_INTERNAL_URL_LENGTH } from "../src/urls/internal-url.js";
import { sessionFileIn } from "./helpers.js";

const base = await tempDirectory("stowage-artifacts-hostile-");
const outside = join(base, "outside");
await mkdir(outside);
await writeFile(join(outside, "secret.json"), '{"secret": "TOP SECRET"}');
const sessionsDir = join(base, "sessions");
await mkdir(sessionsDir);
const sessionFile = sessionFileIn(sessionsDir);
const store = createArtifactStore({ sessionFile, logger: { warn: () => {} } });
await store.saveArtifact("bash", "artifact zero\n");
await store.writeAgentOutput("0-Report", JSON.stringify({ a: [1, null] }));
const router = createInternalUrlRouter({ artifacts: store });
const outsideBefore = await filesUnder(outside, { includeSpecial: true });

const HOSTILE_IDS: ReadonlyArray<[unknown, string]> = [
  ["../x", "leading traversal"],
  ["1/../../etc", "traversal after a valid id"],
  ["%2e%2e", "percent-encoded traversal"],
  ["%2e%2e%2fsecret", "percent-encoded traversal with a slash"],
  ["..", "parent directory"],
  ["1\u0000", "NUL"],
  ["\u0000", "NUL alone"],
  ["/etc/passwd", "absolute path"],
  ["C:\\Windows", "Windows path"],
  ["1\\..\\..\\x", "backslash traversal"],
  ["99999999999999999999999", "huge number"],
  ["-1", "negative"],
  ["1.0", "not an integer"],
  ["0x1", "hex"],
  [" 1", "space"],
  ["", "empty"],
  ["x".repeat(100_000), "oversized"],
  [null, "null"],
  [{ toString: () => "0" }, "object with toString"],
];

describe("hostile ids", () => {
  it.each(HOSTILE_IDS)("readArtifact(%j) fails with INVALID_INPUT (%s)", async (id) => {
    await expectStowageError(store.readArtifact(id as string), "INVALID_INPUT", "INVALID_ARTIFACT_ID");
  });

  it.each(HOSTILE_IDS)("readAgentOutput(%j) fails with INVALID_INPUT (%s)", async (id) => {
    await expectStowageError(store.readAgentOutput(id as string), "INVALID_INPUT", "INVALID_AGENT_OUTPUT_ID");
  });

  it.each(HOSTILE_IDS)("writeAgentOutput(%j) fails with INVALID_INPUT (%s)", async (id) => {
    await expectStowageError(
      store.writeAgentOutput(id as string, "x"),
      "INVALID_INPUT",
      "INVALID_AGENT_OUTPUT_ID",
    );
  });

  it.each(HOSTILE_IDS)("artifact://%s fails with INVALID_INPUT (%s)", async (id) => {
    if (typeof id !== "string") return;
    await expectStowageError(router.read(`artifact://${id}`), "INVALID_INPUT");
  });

  it.each(HOSTILE_IDS)("agent://%s fails with INVALID_INPUT (%s)", async (id) => {
    if (typeof id !== "string") return;
    await expectStowageError(router.read(`agent://${id}`), "INVALID_INPUT");
  });
});

describe("hostile URLs, queries and read options", () => {
  it.each([
    ["artifact://0/../../outside/secret.json", "path after an artifact id"],
    ["artifact://0?q=.a", "query on an artifact"],
    ["agent://0-Report/a?q=.a", "path and query"],
    ["agent://0-Report?q=.a&q=.b", "two queries"],
    ["agent://0-Report?q=", "empty query"],
    [`agent://0-Report?q=.${"a".repeat(MAX_QUERY_LENGTH)}`, "oversized query"],
    [`agent://0-Report/${"a/".repeat(MAX_INTERNAL_URL_LENGTH / 2)}a`, "oversized URL"],
    ["agent://0-Report/%E0%A4%A", "broken percent-escape"],
    ["agent://0-Report?q=.a|.b", "jq pipe (not supported)"],
    ["file:///etc/passwd", "another scheme"],
  ])("%s fails with INVALID_INPUT (%s)", async (url) => {
    await expectStowageError(router.read(url), "INVALID_INPUT");
  });

  it.each([
    [{ offset: 0 }, "offset 0"],
    [{ offset: -5 }, "negative offset"],
    [{ limit: 0 }, "limit 0"],
    [{ limit: 1.5 }, "fractional limit"],
    [{ offset: Number.NaN }, "NaN"],
    [{ maxBytes: 2 ** 40 }, "huge maxBytes"],
    [{ offset: "1" }, "string offset"],
  ])("read options %j fail with INVALID_INPUT (%s)", async (options, _why) => {
    await expectStowageError(
      router.read("artifact://0", options as never),
      "INVALID_INPUT",
      "INVALID_READ_OPTION",
    );
  });

  it("extraction stays inside the JSON document: path segments are keys, not files", async () => {
    for (const url of [
      "agent://0-Report/..%2F..%2Foutside%2Fsecret.json",
      "agent://0-Report/../../outside/secret.json",
    ]) {
      const err = await expectStowageError(router.read(url), "NOT_FOUND", "JSON_PATH_NOT_FOUND");
      expect(err.message).not.toContain("TOP SECRET");
    }
  });

  it("a JSON document nested a million deep is a clear error, not a crash", async () => {
    await store.writeAgentOutput("1-Deep", `${"[".repeat(1_000_000)}${"]".repeat(1_000_000)}`);
    await expectStowageError(router.read("agent://1-Deep?q=."), "TOO_LARGE", "JSON_TOO_DEEP");
  });
});

describe("an error that enforces a limit says it in details.limit", () => {
  // The limits are not exported: the README gives each, and the error that enforces one carries it.
  it.each([
    ["an oversized URL", () => router.read(`agent://0-Report/${"a/".repeat(4096)}a`), "INVALID_URL", 8192],
    [
      "an oversized query",
      () => router.read(`agent://0-Report?q=.${"a".repeat(4096)}`),
      "INVALID_QUERY",
      4096,
    ],
    ["a path of 257 steps", () => router.read(`agent://0-Report/${"a/".repeat(256)}a`), "INVALID_QUERY", 256],
    [
      "a query of 257 steps",
      () => router.read(`agent://0-Report?q=${".a".repeat(257)}`),
      "INVALID_QUERY",
      256,
    ],
    [
      "maxBytes over 256 MiB",
      () => router.read("artifact://0", { maxBytes: 256 * 1024 * 1024 + 1 }),
      "INVALID_READ_OPTION",
      256 * 1024 * 1024,
    ],
    [
      "a byte range's maxBytes over 256 MiB",
      () => router.readBytes("artifact://0", { maxBytes: 256 * 1024 * 1024 + 1 }),
      "INVALID_READ_OPTION",
      256 * 1024 * 1024,
    ],
    [
      "a whole read over its maxBytes",
      () => router.read("artifact://0", { maxBytes: 4 }),
      "READ_TOO_LARGE",
      4,
    ],
    [
      "lines over their maxBytes",
      () => router.read("artifact://0", { offset: 1, limit: 1, maxBytes: 4 }),
      "READ_TOO_LARGE",
      4,
    ],
    [
      "spillBytes over 8 MiB",
      async () => createOutputSink({ spillBytes: 8 * 1024 * 1024 + 1 }),
      undefined,
      8 * 1024 * 1024,
    ],
    [
      "an agent output id past 200 characters",
      () => store.allocateAgentOutput("x", { parentPrefix: `0-${"a".repeat(190)}` }),
      "AGENT_OUTPUT_ID_TOO_LONG",
      200,
    ],
  ] as const)("%s", async (_why, action, reason, limit) => {
    const err = await expectStowageError(
      action,
      reason === "READ_TOO_LARGE" ? "TOO_LARGE" : "INVALID_INPUT",
      reason,
    );
    expect(err.details?.limit).toBe(limit);
  });
});

describe("hostile names are sanitized into the session directory", () => {
  it.each([
    "../../outside/evil",
    "/etc/passwd",
    "..",
    "a\u0000b",
    "%2e%2e/x",
    "x".repeat(100_000),
    "ツール",
    "",
  ])("tool type %j", async (toolType) => {
    const id = await store.saveArtifact(toolType, "x");
    const entry = (await store.listArtifacts()).find((candidate) => candidate.id === id)!;
    expect(entry.fileName).toMatch(/^\d+\.[A-Za-z0-9_-]{1,64}\.log$/);
    const sink = createOutputSink({ artifacts: store, toolType, spillBytes: 1 });
    await sink.push("xy");
    expect((await sink.dump()).artifactId).toBeDefined();
  });

  it.each(["../../outside/evil", "/etc/passwd", "..", "a.b.c", "%2e%2e", "x".repeat(100_000), ""])(
    "requested agent id %j",
    async (requested) => {
      const { outputId, path } = await store.allocateAgentOutput(requested);
      expect(outputId).toMatch(/^\d+-[A-Za-z0-9_-]{1,64}$/);
      expect(path).toBe(join(store.dir, `${outputId}.md`));
    },
  );

  it.each(["../x", "0-a/../../b", "0-a.", "%2e%2e", "/abs", "0-a\u0000", "x".repeat(1000)])(
    "parent prefix %j is rejected",
    async (parentPrefix) => {
      await expectStowageError(store.allocateAgentOutput("x", { parentPrefix }), "INVALID_INPUT");
    },
  );
});

describe("hostile session files and bodies", () => {
  it.each([
    ["", "empty"],
    [join(base, "../x.jsonl"), "no <timestamp>_ part"],
    [join(base, "1_a\u0000b.jsonl"), "NUL"],
    [`${join(base, "1_a.jsonl")}/`, "trailing slash"],
    [join(base, "1_a.json"), "not .jsonl"],
    [join(base, `1_${"x".repeat(300)}.jsonl`), "name too long"],
  ])("session file %j is rejected (%s)", async (file) => {
    await expectStowageError(() => artifactsDirFor(file), "INVALID_INPUT", "INVALID_SESSION_FILE");
    await expectStowageError(
      () => createArtifactStore({ sessionFile: file }),
      "INVALID_INPUT",
      "INVALID_SESSION_FILE",
    );
    await expectStowageError(moveSession(file, outside), "INVALID_INPUT");
  });

  it.each([42, null, { length: 1 }, [1, 2]])("body %j is rejected", async (body) => {
    await expectStowageError(store.saveArtifact("bash", body as never), "INVALID_INPUT");
    await expectStowageError(store.writeAgentOutput("5-x", body as never), "INVALID_INPUT");
  });
});

// Hostile tool output: what reaches the model (the sink's tail, artifact:// reads) holds no
// escape sequence and no control character but newline and tab.
const HOSTILE_OUTPUT: ReadonlyArray<[string, Uint8Array | string]> = [
  ["a terminal title set by OSC", "\u001b]0;pwned\u0007visible\n"],
  ["a hyperlink hiding its target", "\u001b]8;;https://evil.test\u001b\\click\u001b]8;;\u001b\\\n"],
  ["cursor moves that overwrite earlier lines", "safe\n\u001b[1A\u001b[2Koverwritten\n"],
  ["NUL, BEL and backspaces", "a\u0000b\u0007c\b\b\bd\n"],
  ["8-bit CSI", "\u009b31mred\u009b0m\n"],
  ["invalid UTF-8", new Uint8Array([0x6f, 0x6b, 0xc0, 0xaf, 0xff, 0x0a])],
  ["an unterminated OSC", "\u001b]52;c;aGVsbG8=\nnext\n"],
];

describe("hostile tool output reaches the model sanitized", () => {
  it.each(HOSTILE_OUTPUT)("%s", async (_what, chunk) => {
    const sink = createOutputSink({ artifacts: store, toolType: "bash", spillBytes: 4 });
    await sink.push(chunk);
    const summary = await sink.dump();
    const read = await router.read(`artifact://${summary.artifactId}`);
    for (const text of [summary.text, read.text]) {
      expect(text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    }
  });
});

describe("afterwards", () => {
  it("nothing outside the session directory was created or changed", async () => {
    expect(await filesUnder(outside, { includeSpecial: true })).toEqual(outsideBefore);
    expect((await readdir(sessionsDir)).sort()).toEqual([artifactsDirFor(sessionFile).split("/").pop()]);
    expect(
      (await readdir(store.dir)).every((name) => name === CLAIMS_DIR_NAME || /\.(log|md)$/.test(name)),
    ).toBe(true);
  });
});
