import { StowageError } from "@stowage/core";
import { describe, expect, it } from "vitest";
import { JsonlChecker } from "../../src/archive/jsonl-checker.js";

const SESSION = "6b7c8d9e-0f1a-4b2c-8d3e-4f5a6b7c8d9e";
const OTHER = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";

const bytes = (...parts: (string | number[])[]) => Buffer.concat(parts.map((part) => Buffer.from(part)));

/** `input` fed in chunks of `size` bytes (whole when size is 0); the records counted, or the error. */
function check(input: Buffer, size: number): { records: number } | { reason: unknown; message: string } {
  const checker = new JsonlChecker(SESSION);
  try {
    const step = size === 0 ? Math.max(1, input.byteLength) : size;
    for (let at = 0; at < input.byteLength; at += step) {
      // A fresh copy per chunk, overwritten after the call: the checker must keep its own bytes.
      const chunk = Buffer.from(input.subarray(at, at + step));
      checker.update(chunk);
      chunk.fill(0x21);
    }
    checker.finish();
    return { records: checker.records };
  } catch (err) {
    if (!(err instanceof StowageError)) throw err;
    return { reason: err.reason, message: err.message };
  }
}

const CHUNK_SIZES = [0, 1, 2, 3, 7, 64];

// Written by hand: Claude Code entries as JSON lines, and what the checker must say of them.
const ACCEPTED: [string, Buffer, number][] = [
  ["two entries", bytes(`{"type":"user","sessionId":"${SESSION}"}\n{"type":"assistant"}\n`), 2],
  ["no newline after the last line", bytes(`{"a":1}\n{"b":2}`), 2],
  ["blank and whitespace lines", bytes('\n{"a":1}\n   \n\t\n{"b":2}\n\n'), 2],
  ["CRLF line ends", bytes('{"a":1}\r\n{"b":2}\r\n'), 2],
  ["a byte order mark before the first line", bytes([0xef, 0xbb, 0xbf], '{"a":1}\n'), 1],
  ["multi-byte text, split by small chunks", bytes('{"t":"naïve 日本語 😀"}\n{"t":"é"}\n'), 2],
  ["a long line", bytes(`{"t":"${"x".repeat(10_000)}"}\n`), 1],
];

const REFUSED: [string, Buffer, string, string][] = [
  ["a lone continuation byte", bytes('{"a":1}\n{"t":"', [0x80], '"}\n'), "BAD_JSONL", "is not valid UTF-8"],
  ["an overlong slash", bytes('{"t":"', [0xc0, 0xaf], '"}\n'), "BAD_JSONL", "is not valid UTF-8"],
  ["an encoded surrogate", bytes('{"t":"', [0xed, 0xa0, 0x80], '"}\n'), "BAD_JSONL", "is not valid UTF-8"],
  ["a sequence cut by the end", bytes('{"a":1}\n', [0xe6, 0x97]), "BAD_JSONL", "is not valid UTF-8"],
  ["a sequence cut by a newline", bytes('{"t":"', [0xe6], '\n"}\n'), "BAD_JSONL", "is not valid UTF-8"],
  [
    "a byte order mark on a later line",
    bytes('{"a":1}\n', [0xef, 0xbb, 0xbf], '{"b":2}\n'),
    "BAD_JSONL",
    "line 2 is not JSON",
  ],
  ["a cut line", bytes('{"a":1}\n{"b":'), "BAD_JSONL", "line 2 is not JSON"],
  ["a number", bytes('{"a":1}\n1\n'), "BAD_JSONL", "line 2 is not a JSON object"],
  ["null", bytes("null\n"), "BAD_JSONL", "line 1 is not a JSON object"],
  ["an array", bytes('[{"type":"user"}]\n'), "BAD_JSONL", "line 1 is not a JSON object"],
  [
    "another session's line",
    bytes('{"a":1}\n', `{"sessionId":"${OTHER}"}\n`),
    "SESSION_MISMATCH",
    `belongs to session ${OTHER}`,
  ],
  ["nothing", bytes(""), "BAD_JSONL", "holds no JSON line"],
  ["only blank lines", bytes("\n \r\n\n"), "BAD_JSONL", "holds no JSON line"],
];

describe("JsonlChecker", () => {
  for (const size of CHUNK_SIZES) {
    describe(size === 0 ? "in one chunk" : `in chunks of ${size} bytes`, () => {
      it.each(ACCEPTED)("accepts %s", (_what, input, records) => {
        expect(check(input, size)).toEqual({ records });
      });
      it.each(REFUSED)("refuses %s", (_what, input, reason, message) => {
        const result = check(input, size);
        expect(result).toMatchObject({ reason });
        expect((result as { message: string }).message).toContain(message);
      });
    });
  }
});
