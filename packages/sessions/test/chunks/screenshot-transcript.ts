import { readFileSync } from "node:fs";
import { join } from "node:path";
import { seededRandom } from "@stowage/core/testing";
import { claudeReadImageFields, encodePng, REAL_TRANSCRIPTS_DIR } from "@stowage/test-support";

/** A real Claude Code 2.0.76 transcript (222 lines, 2.6 MB): the text a capture is made of. */
export const REAL_CLAUDE_TRANSCRIPT = "claude-code/session-624a4a58.jsonl";

/** The lines of a real transcript, each with its `\n`. */
export function realLines(file: string): string[] {
  const text = readFileSync(join(REAL_TRANSCRIPTS_DIR, file), "utf8");
  return text.split(/(?<=\n)/);
}

/**
 * A real, decodable PNG of 320×200 whose pixels are mostly noise (a screenshot's photo or
 * anti-aliased text is what keeps it from compressing to nothing), the same bytes for a seed.
 */
export function noisyPng(seed: number): Buffer {
  const random = seededRandom(seed);
  return encodePng(320, 200, (x, y) =>
    y % 8 < 4 ? [255, 255, 255] : [random() * 256, (x * 3) % 256, (y * 5) % 256],
  );
}

/**
 * The line Claude Code 2.1 writes for a `Read` of a screenshot (test-support's
 * `claudeReadImageFields`: the image twice).
 */
export function readScreenshotLine(png: Buffer, turn: number): string {
  const record = {
    parentUuid: `00000000-0000-4000-8000-${String(turn).padStart(12, "0")}`,
    isSidechain: false,
    userType: "external",
    cwd: "/Users/user/repo",
    sessionId: "624a4a58-b34c-462d-a70d-13421c8125a8",
    version: "2.1.4",
    ...claudeReadImageFields(`toolu_01screenshot${turn}`, png, { originalWidth: 320, originalHeight: 200 }),
    uuid: `11111111-0000-4000-8000-${String(turn).padStart(12, "0")}`,
    timestamp: `2026-01-07T20:${String(30 + (turn % 30)).padStart(2, "0")}:00.000Z`,
  };
  return `${JSON.stringify(record)}\n`;
}

/** The real transcript's first `lines` lines, with a screenshot read after every `every`-th (the `distinct` PNGs in turn). */
export function transcriptWithScreenshots(options: {
  lines: number;
  every: number;
  distinct: number;
}): string {
  const real = realLines(REAL_CLAUDE_TRANSCRIPT).slice(0, options.lines);
  const pngs = Array.from({ length: options.distinct }, (_, i) => noisyPng(i + 1));
  return real
    .map((line, i) =>
      (i + 1) % options.every === 0
        ? line + readScreenshotLine(pngs[((i + 1) / options.every) % options.distinct]!, i)
        : line,
    )
    .join("");
}
