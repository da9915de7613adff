import { seededRandom } from "@stowage/core/testing";
import { encodePng, type Rgb } from "./png.js";
import type { RealRecord, RealTranscripts } from "./real-transcripts.js";

/**
 * A screenshot-like PNG, the same bytes for the same seed: a window with a title bar, a side bar,
 * rows of dark "text" runs on light panels, and a photo-like block of noise (a real page's image
 * or anti-aliased text is what keeps a real screenshot from compressing to nothing). 1024×640 by
 * default: about 120 KB, what a browser or desktop screenshot tool writes for a page.
 */
export function screenshotPng(seed: number, width = 1024, height = 640): Buffer {
  const random = seededRandom(seed);
  const accent: Rgb = [random() * 200, random() * 200, random() * 200 + 55];
  // Where the "text" runs are on each row band: one run pattern per band of 16 rows.
  const runs = Array.from({ length: Math.ceil(height / 16) }, () =>
    Array.from({ length: 12 }, () => [Math.floor(random() * width), 20 + Math.floor(random() * 140)]),
  );
  const photo = {
    x: Math.floor(width * 0.55),
    y: Math.floor(height * 0.3),
    w: Math.floor(width * 0.3),
    h: Math.floor(height * 0.25),
  };
  return encodePng(width, height, (x, y): Rgb => {
    if (y < 28) return accent;
    if (x < 180) return [236, 238, 242];
    if (x >= photo.x && x < photo.x + photo.w && y >= photo.y && y < photo.y + photo.h)
      return [random() * 256, random() * 256, random() * 256];
    const row = y % 16;
    if (row >= 4 && row <= 11) {
      for (const [start, length] of runs[Math.floor(y / 16)]!)
        if (x >= start! && x < start! + length! && (x * 7 + y) % 5 !== 0) return [40, 42, 48];
    }
    return [255, 255, 255];
  });
}

const CLAUDE_VERSION = "2.1.4";

export interface ClaudeScreenshotSessionOptions {
  /** Turns: a prompt, the assistant's tool call, its result. */
  turns: number;
  /** Turns whose tool call is a `Read` of a screenshot (the first ones, one a turn). */
  screenshots: number;
  /** Distinct screenshots among them: the read of turn `n` shows screenshot `n % distinct`. Default `screenshots`. */
  distinct?: number;
  seed?: number;
  /** Screenshot size; default 1024×640. */
  width?: number;
  height?: number;
}

/**
 * The fields of the record Claude Code 2.1 writes for the result of a `Read` of an image: the image
 * twice, as an image block of the `tool_result` in `message.content` and as
 * `toolUseResult.file.base64` (the shapes of its transcripts, and the double copy public reports
 * found in their 16.7 MB sessions). The caller adds the record's ids, times and session fields.
 */
export function claudeReadImageFields(
  toolUseId: string,
  png: Buffer,
  dimensions: Record<string, number>,
): { type: "user" } & RealRecord {
  const base64 = png.toString("base64");
  return {
    type: "user",
    message: {
      role: "user",
      content: [
        {
          tool_use_id: toolUseId,
          type: "tool_result",
          content: [{ type: "image", source: { type: "base64", data: base64, media_type: "image/png" } }],
        },
      ],
    },
    toolUseResult: {
      type: "image",
      file: { base64, type: "image/png", originalSize: png.byteLength, dimensions },
    },
  };
}

/**
 * A Claude Code transcript (the lines of its JSONL) of an agent that looks at screenshots with the
 * `Read` tool, in Claude Code 2.1's shapes (`claudeReadImageFields`). Other turns run a command.
 */
export function claudeScreenshotSession(options: ClaudeScreenshotSessionOptions): RealRecord[] {
  const { turns, screenshots } = options;
  const distinct = options.distinct ?? screenshots;
  const seed = options.seed ?? 1;
  const random = seededRandom(seed);
  const images = new Map<number, Buffer>();
  const imageOf = (n: number) => {
    const index = n % Math.max(1, distinct);
    if (!images.has(index))
      images.set(index, screenshotPng(seed * 1000 + index, options.width, options.height));
    return images.get(index)!;
  };
  const sessionId = randomUUIDFrom(random);
  const base = {
    isSidechain: false,
    userType: "external",
    cwd: "/workspace/app",
    sessionId,
    version: CLAUDE_VERSION,
    gitBranch: "main",
  };
  const lines: RealRecord[] = [];
  let parentUuid: string | null = null;
  let clock = Date.UTC(2026, 10, 20, 9);
  const nextTime = () => {
    clock += 1700;
    return new Date(clock).toISOString();
  };
  const push = (record: RealRecord) => {
    const uuid = randomUUIDFrom(random);
    lines.push({ parentUuid, ...base, ...record, uuid, timestamp: nextTime() });
    parentUuid = uuid;
  };
  for (let turn = 0; turn < turns; turn++) {
    const toolUseId = `toolu_01${Math.floor(random() * 1e16)
      .toString(36)
      .padStart(11, "0")}`;
    const screenshot = turn < screenshots;
    const file = `/workspace/app/screenshots/page-${turn % Math.max(1, distinct)}.png`;
    push({
      type: "user",
      message: {
        role: "user",
        content: `Step ${turn + 1}: check the page again and tell me what changed in the header layout.`,
      },
    });
    push({
      type: "assistant",
      message: {
        id: `msg_01${turn}`,
        type: "message",
        role: "assistant",
        model: "claude-sonnet-4-5-20250929",
        content: [
          { type: "text", text: screenshot ? "Let me look at the screenshot." : "Let me run the tests." },
          screenshot
            ? { type: "tool_use", id: toolUseId, name: "Read", input: { file_path: file } }
            : {
                type: "tool_use",
                id: toolUseId,
                name: "Bash",
                input: { command: "npm test", description: "Run the tests" },
              },
        ],
        stop_reason: "tool_use",
        usage: { input_tokens: 1200 + turn * 40, output_tokens: 90, cache_read_input_tokens: 30_000 },
      },
    });
    if (screenshot) {
      push(
        claudeReadImageFields(toolUseId, imageOf(turn), {
          originalWidth: options.width ?? 1024,
          originalHeight: options.height ?? 640,
        }),
      );
    } else {
      const stdout = `> app@1.0.0 test\n> vitest run\n\n ✓ test/header.test.ts (${3 + turn} tests)\n\n Test Files  1 passed (1)\n      Tests  ${3 + turn} passed\n`;
      push({
        type: "user",
        message: {
          role: "user",
          content: [{ tool_use_id: toolUseId, type: "tool_result", content: stdout, is_error: false }],
        },
        toolUseResult: { stdout, stderr: "", interrupted: false, isImage: false },
      });
    }
  }
  return lines;
}

/**
 * Every real transcript's records, with real PNGs put where each agent writes images into some of
 * its real lines: Claude Code's `Read` results (both copies) in every fifth tool result, Codex's
 * pasted images in every user prompt (its item and its event, one image), pi's read images in
 * every fifth tool result.
 * The rest of each line stays as the agent wrote it.
 */
export function realTranscriptsWithImages(real: RealTranscripts): { file: string; records: RealRecord[] }[] {
  let seed = 100;
  const png = () => screenshotPng(seed++, 320, 200);
  return real.files().map((file) => {
    const records = real.records(file);
    let toolResults = 0;
    // Codex writes one pasted image twice: the prompt's item and its event share the data URL.
    let pasted: string | undefined;
    const pastedImage = () => {
      const url = pasted ?? `data:image/png;base64,${png().toString("base64")}`;
      pasted = pasted ? undefined : url;
      return url;
    };
    for (const record of records) {
      const content = record.message?.content;
      if (
        file.startsWith("claude-code/") &&
        record.type === "user" &&
        Array.isArray(content) &&
        content[0]?.type === "tool_result"
      ) {
        if (toolResults++ % 5 !== 0) continue;
        const image = png();
        const base64 = image.toString("base64");
        content[0].content = [
          { type: "image", source: { type: "base64", data: base64, media_type: "image/png" } },
        ];
        record.toolUseResult = {
          type: "image",
          file: { base64, type: "image/png", originalSize: image.byteLength },
        };
      } else if (file.startsWith("codex/") && record.payload?.type === "user_message") {
        record.payload.images = [pastedImage()];
      } else if (
        file.startsWith("codex/") &&
        record.payload?.type === "message" &&
        record.payload.role === "user"
      ) {
        record.payload.content.push({ type: "input_image", image_url: pastedImage() });
      } else if (file.startsWith("pi/") && record.message?.role === "toolResult" && Array.isArray(content)) {
        if (toolResults++ % 5 !== 0) continue;
        content.push({ type: "image", data: png().toString("base64"), mimeType: "image/png" });
      }
    }
    return { file, records };
  });
}

/** A UUID from a seeded generator (the same session every run). */
function randomUUIDFrom(random: () => number): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16)).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20)}`;
}
