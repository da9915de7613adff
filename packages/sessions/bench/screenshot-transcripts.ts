import { seededRandom } from "@stowage/core/testing";
import { claudeReadImageFields, encodePng } from "@stowage/test-support";
import type { SessionStoreEntry } from "../src/index.js";

/**
 * The sessions of issue 29's measure, as a SessionStore receives them: a Claude Code transcript
 * whose turns each read a screenshot (the Read tool writes every image twice, in
 * `message.content` and in `toolUseResult.file.base64`), and a Codex rollout whose user turns
 * attach one (in the `response_item` message as `input_image` and in the `event_msg`
 * `user_message.images`, both data URLs). Shapes from the agent-session-formats notes and the real
 * files; screenshots are real PNGs of a 1280x800 window with rows of anti-aliased text-like
 * pixels (about 115 KB each).
 */

/** Grays of text pixels: a glyph's core and its anti-aliased edges. */
const GLYPH_GRAYS = [30, 110, 190];

/** A 1280x800 PNG of a window: a title bar, a sidebar and rows of glyph-like pixels. */
export function screenshotPng(seed: number): Buffer {
  const random = seededRandom(seed);
  const accent: [number, number, number] = [Math.floor(random() * 200), Math.floor(random() * 200), 255];
  return encodePng(1280, 800, (x, y) => {
    if (y < 48) return accent;
    if (x < 220) return [245, 246, 248];
    if (y % 20 < 9 && x % 300 < 260 && random() < 0.35) {
      const gray = GLYPH_GRAYS[Math.floor(random() * GLYPH_GRAYS.length)]!;
      return [gray, gray, gray];
    }
    return [255, 255, 255];
  });
}

const WORDS =
  "the page shows the settings form with the save button disabled until the email field validates so I will type a valid address and take another screenshot to check that the banner appears".split(
    " ",
  );

function prose(random: () => number, words: number): string {
  const start = Math.floor(random() * WORDS.length);
  return Array.from({ length: words }, (_, i) => WORDS[(start + i) % WORDS.length]).join(" ");
}

/** A uuid-shaped id from the seeded random (the SDK's idempotency key must differ per entry). */
function uuid(random: () => number): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16)).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20)}`;
}

export interface ScreenshotSession {
  /** One batch of entries per turn, as the SDK mirrors a turn to the store. */
  turns: SessionStoreEntry[][];
  /** Bytes of the entries as JSON lines. */
  jsonBytes: number;
  /** Bytes of the distinct PNGs. */
  distinctPngBytes: number;
}

const jsonBytesOf = (turns: SessionStoreEntry[][]) =>
  turns.flat().reduce((sum, entry) => sum + Buffer.byteLength(JSON.stringify(entry)) + 1, 0);

/**
 * A Claude Code transcript of `turns` turns, each reading a screenshot with the Read tool:
 * `pngs[turn % pngs.length]`, so with 40 turns and 20 PNGs every screenshot is read twice (the
 * page did not change between two reads). Each turn: the user's prompt, the assistant's text and
 * `tool_use`, the `tool_result` with the image (twice, as Claude Code writes it), the reply.
 */
export function claudeScreenshotSession(
  sessionId: string,
  turns: number,
  pngs: readonly Buffer[],
): ScreenshotSession {
  const random = seededRandom(29);
  const base = {
    sessionId,
    cwd: "/workspace/app",
    version: "2.1.330",
    gitBranch: "main",
    userType: "external",
    isSidechain: false,
  };
  let parentUuid: string | null = null;
  let clock = Date.parse("2026-11-28T09:00:00.000Z");
  const entry = (fields: { type: string } & Record<string, unknown>): SessionStoreEntry => {
    const id = uuid(random);
    clock += 1000 + Math.floor(random() * 4000);
    const line = { parentUuid, ...base, ...fields, uuid: id, timestamp: new Date(clock).toISOString() };
    parentUuid = id;
    return line;
  };
  const batches: SessionStoreEntry[][] = [];
  for (let turn = 0; turn < turns; turn++) {
    const png = pngs[turn % pngs.length]!;
    const toolUseId = `toolu_01${uuid(random).replaceAll("-", "").slice(0, 22)}`;
    const messageId = `msg_01${uuid(random).replaceAll("-", "").slice(0, 22)}`;
    const file = `/workspace/app/screenshots/step-${turn % pngs.length}.png`;
    batches.push([
      entry({ type: "user", message: { role: "user", content: prose(random, 20) } }),
      entry({
        type: "assistant",
        requestId: `req_011${uuid(random).replaceAll("-", "").slice(0, 21)}`,
        message: {
          id: messageId,
          type: "message",
          role: "assistant",
          model: "claude-sonnet-4-5",
          content: [
            { type: "text", text: prose(random, 40) },
            { type: "tool_use", id: toolUseId, name: "Read", input: { file_path: file } },
          ],
          stop_reason: "tool_use",
          usage: {
            input_tokens: 1200 + turn * 1700,
            output_tokens: 90,
            cache_read_input_tokens: turn * 1500,
          },
        },
      }),
      entry(
        claudeReadImageFields(toolUseId, png, {
          originalWidth: 1280,
          originalHeight: 800,
          displayWidth: 1280,
          displayHeight: 800,
        }),
      ),
      entry({
        type: "assistant",
        message: {
          id: `${messageId}b`,
          type: "message",
          role: "assistant",
          model: "claude-sonnet-4-5",
          content: [{ type: "text", text: prose(random, 60) }],
          stop_reason: "end_turn",
          usage: { input_tokens: 2900 + turn * 1700, output_tokens: 140 },
        },
      }),
    ]);
  }
  const distinct = new Set(pngs.slice(0, turns));
  return {
    turns: batches,
    jsonBytes: jsonBytesOf(batches),
    distinctPngBytes: [...distinct].reduce((sum, png) => sum + png.byteLength, 0),
  };
}

/**
 * A Codex rollout of `turns` turns (`{ timestamp, type, payload }` lines), every other user turn
 * attaching a screenshot (`pngs[i]` for the i-th attachment, all distinct when there are enough):
 * the user's message as a `response_item` with `input_text` and `input_image`, and the
 * `event_msg` `user_message` with the same data URL in `images`; then reasoning, a shell call, its
 * output and the agent's message. One batch per turn.
 */
export function codexScreenshotRollout(
  sessionId: string,
  turns: number,
  pngs: readonly Buffer[],
): ScreenshotSession {
  const random = seededRandom(2929);
  let clock = Date.parse("2026-11-28T09:00:00.000Z");
  const line = (type: string, payload: unknown): SessionStoreEntry => {
    clock += 500 + Math.floor(random() * 3000);
    return { timestamp: new Date(clock).toISOString(), type, payload } as SessionStoreEntry;
  };
  const batches: SessionStoreEntry[][] = [
    [
      line("session_meta", {
        id: sessionId,
        timestamp: new Date(clock).toISOString(),
        cwd: "/workspace/app",
        originator: "codex_exec",
        cli_version: "0.169.0",
        source: "exec",
        model_provider: "openai",
      }),
    ],
  ];
  let attached = 0;
  const used = new Set<Buffer>();
  for (let turn = 0; turn < turns; turn++) {
    const text = prose(random, 20);
    const png = turn % 2 === 0 ? pngs[attached++ % pngs.length] : undefined;
    if (png) used.add(png);
    const images = png ? [`data:image/png;base64,${png.toString("base64")}`] : [];
    const callId = `call_${uuid(random).replaceAll("-", "").slice(0, 24)}`;
    batches.push([
      line("turn_context", {
        cwd: "/workspace/app",
        approval_policy: "never",
        model: "gpt-5",
        effort: "medium",
      }),
      line("response_item", {
        type: "message",
        role: "user",
        content: [
          { type: "input_text", text },
          ...images.map((image_url) => ({ type: "input_image", image_url })),
        ],
      }),
      line("event_msg", { type: "user_message", message: text, images, local_images: [], text_elements: [] }),
      line("response_item", {
        type: "reasoning",
        summary: [{ type: "summary_text", text: prose(random, 30) }],
        encrypted_content: Buffer.from(prose(random, 80)).toString("base64"),
      }),
      line("response_item", {
        type: "function_call",
        name: "shell",
        arguments: JSON.stringify({
          command: ["bash", "-lc", "npx playwright screenshot http://localhost:3000"],
        }),
        call_id: callId,
      }),
      line("response_item", {
        type: "function_call_output",
        call_id: callId,
        output: JSON.stringify({
          output: prose(random, 50),
          metadata: { exit_code: 0, duration_seconds: 1.2 },
        }),
      }),
      line("event_msg", { type: "agent_message", message: prose(random, 50) }),
      line("response_item", {
        type: "message",
        role: "assistant",
        content: [{ type: "output_text", text: prose(random, 50) }],
      }),
    ]);
  }
  return {
    turns: batches,
    jsonBytes: jsonBytesOf(batches),
    distinctPngBytes: [...used].reduce((sum, png) => sum + png.byteLength, 0),
  };
}
