import { describe, expect, it } from "vitest";
import { ContentRecordSchema, ContentRefSchema, HotStateSchema } from "../../src/schemas/schemas.js";
import { hexIds } from "../corpora.js";
import { HOSTILE_CONTENT_IDS } from "../hostile-ids.js";

// The README's limits.
const MAX_ID_CHARS = 256;
const MAX_HOT_STATE_LIST_ITEMS = 200;
const MAX_CONTENT_SUMMARY_CHARS = 500;

const [id] = hexIds(1) as [string];

const fullState = {
  session_id: "sess-1",
  session_key: "agent:main:sess-1",
  run_id: "run-7",
  objective: "Ship the parser",
  current_plan_id: null,
  accepted_decisions: ["use zod"],
  open_questions: ["which format?"],
  constraints: ["no network"],
  last_successful_step: "tests pass",
  risk_level: "medium",
  artifact_index: [
    { artifact_id: id, type: "code", label: "parser.ts", version: "v2", summary: "the parser" },
  ],
};

const record = {
  artifact_id: id,
  type: "doc",
  content_uri: `file:///var/lib/stowage/objects/blobs/${id.slice(0, 2)}/${id}`,
  content_hash: id,
  size_bytes: 12,
  created_at: "2026-01-02T03:04:05.678Z",
  producer: "executor",
  summary: "notes",
  mime: "text/markdown",
};

describe("HotStateSchema", () => {
  it("accepts a full state and a minimal one", () => {
    expect(HotStateSchema.parse(fullState)).toEqual(fullState);
    expect(HotStateSchema.parse({ session_id: "s" })).toEqual({ session_id: "s" });
  });

  it.each([
    [{}, "no session_id"],
    [{ session_id: "" }, "empty session_id"],
    [{ session_id: "s", extra: 1 }, "an unknown field (strict)"],
    [{ session_id: "s", risk_level: "extreme" }, "an unknown risk level"],
    [{ session_id: "s", current_plan_id: 5 }, "a numeric plan id"],
    [{ session_id: "a\u0000b" }, "NUL in an id"],
    [{ session_id: "a\nb" }, "a newline in an id"],
    [{ session_id: "a\u001b[31m" }, "an escape sequence in an id"],
    [{ session_id: "bad\ud800" }, "a lone surrogate in an id"],
    [{ session_id: "x".repeat(MAX_ID_CHARS + 1) }, "an oversized id"],
    [{ session_id: "s", objective: "a\u0000" }, "NUL in free text"],
    [{ session_id: "s", accepted_decisions: "one" }, "a string where a list belongs"],
    [{ session_id: "s", constraints: Array(MAX_HOT_STATE_LIST_ITEMS + 1).fill("c") }, "an oversized list"],
    [{ session_id: "s", artifact_index: [{ artifact_id: id, type: "image" }] }, "an unknown artifact type"],
    [
      { session_id: "s", artifact_index: [{ artifact_id: id, type: "doc", url: "x" }] },
      "an unknown entry field",
    ],
    [null, "null"],
    ["{}", "a JSON string"],
  ])("rejects %j (%s)", (value, _why) => {
    expect(HotStateSchema.safeParse(value).success).toBe(false);
  });

  it("keeps tabs and newlines in free text and astral characters anywhere", () => {
    const state = { session_id: "sess-🎉", objective: "line 1\n\tline 2 😀" };
    expect(HotStateSchema.parse(state)).toEqual(state);
  });
});

describe("ContentRefSchema", () => {
  it.each(HOSTILE_CONTENT_IDS)("rejects artifact_id $why", ({ value }) => {
    expect(ContentRefSchema.safeParse({ artifact_id: value, type: "doc" }).success).toBe(false);
  });

  it("bounds the summary", () => {
    const entry = { artifact_id: id, type: "doc", summary: "s".repeat(MAX_CONTENT_SUMMARY_CHARS) };
    expect(ContentRefSchema.safeParse(entry).success).toBe(true);
    expect(ContentRefSchema.safeParse({ ...entry, summary: `${entry.summary}s` }).success).toBe(false);
  });
});

describe("ContentRecordSchema", () => {
  it("accepts a record with file://, s3:// and blob:sha256: URIs", () => {
    expect(ContentRecordSchema.parse(record)).toEqual(record);
    const s3 = { ...record, content_uri: `s3://bucket/blobs/${id}` };
    expect(ContentRecordSchema.parse(s3)).toEqual(s3);
    const blobRef = { ...record, content_uri: `blob:sha256:${id}` };
    expect(ContentRecordSchema.parse(blobRef)).toEqual(blobRef);
  });

  it.each([
    [{ content_uri: "http://example.com/x" }, "an http URI"],
    [{ content_uri: "file:///a b" }, "a space in the URI"],
    [{ content_uri: "javascript:alert(1)" }, "a script URI"],
    [{ content_uri: `blob:sha256:${id.slice(1)}` }, "a blob ref with a short hash"],
    [{ content_uri: `blob:sha256:${id.toUpperCase()}` }, "a blob ref in uppercase"],
    [{ content_uri: `blob:sha256:${id}/x` }, "a blob ref with a path"],
    [{ content_hash: hexIds(2)[1] }, "a content_hash that is not the id"],
    [{ size_bytes: -1 }, "a negative size"],
    [{ size_bytes: 1.5 }, "a fractional size"],
    [{ created_at: "yesterday" }, "a non-ISO date"],
    [{ producer: "root" }, "an unknown producer"],
    [{ summary: "s".repeat(MAX_CONTENT_SUMMARY_CHARS + 1) }, "a summary over 500 characters"],
    [{ mime: "not a mime" }, "a malformed MIME type"],
    [{ mime: "text/plain; charset=utf-8; charset=latin1" }, "a MIME parameter given twice"],
    [{ mime: `text/${"x".repeat(255)}` }, "a MIME type over 255 characters"],
    [{ extra: true }, "an unknown field"],
  ])("rejects %j (%s)", (change, _why) => {
    expect(ContentRecordSchema.safeParse({ ...record, ...change }).success).toBe(false);
  });
});
