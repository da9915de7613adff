// Content-defined chunks at line ends, on a real Claude Code transcript: chunks hold whole lines,
// and lines appended to a transcript leave every earlier cut where it was.
import { realTranscripts } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { lineChunkEnds } from "../../src/chunks/line-chunks.js";
import { REAL_CLAUDE_TRANSCRIPT, realLines } from "./screenshot-transcript.js";

const encoder = new TextEncoder();
// Skipped where the real transcript is absent (a clone without shared/ beside it); realTranscripts
// prints why, and fails in CI.
const real = realTranscripts("lineChunkEnds (a real Claude Code transcript)");
const lines = real.present ? realLines(REAL_CLAUDE_TRANSCRIPT) : [];
const whole = encoder.encode(lines.join(""));

describe.skipIf(!real.present)("lineChunkEnds", () => {
  it("cuts only after a newline, and the chunks cover the file", () => {
    const ends = lineChunkEnds(whole);
    expect(ends.at(-1)).toBe(whole.byteLength);
    for (const end of ends.slice(0, -1)) expect(whole[end - 1]).toBe(0x0a);
    expect([...ends].sort((a, b) => a - b)).toEqual(ends);
    // 2.6 MB in chunks of about 64 KiB (16 KiB to 256 KiB, a longer line alone).
    expect(ends.length).toBeGreaterThan(10);
    expect(ends.length).toBeLessThan(170);
  });

  it("a transcript that grew keeps every cut of what it was", () => {
    for (const count of [60, 120, 200]) {
      const before = encoder.encode(lines.slice(0, count).join(""));
      const kept = lineChunkEnds(before).slice(0, -1);
      const after = new Set(lineChunkEnds(whole));
      for (const end of kept) expect(after.has(end)).toBe(true);
    }
  });

  it("a line longer than the largest chunk is one chunk, never split", () => {
    const long = `{"x":"${"a".repeat(600 * 1024)}"}\n`;
    const text = encoder.encode(lines.slice(0, 5).join("") + long + lines.slice(5, 10).join(""));
    const ends = lineChunkEnds(text);
    const start = Buffer.byteLength(lines.slice(0, 5).join(""));
    const end = start + long.length;
    expect(ends.some((cut) => cut > start && cut < end)).toBe(false);
  });

  it("an empty file has no chunk; one without a final newline ends its last chunk at its end", () => {
    expect(lineChunkEnds(new Uint8Array())).toEqual([]);
    expect(lineChunkEnds(encoder.encode('{"a":1}\n{"b":2}'))).toEqual([15]);
  });
});
