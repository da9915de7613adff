// Stored sessions made of real transcripts (../shared/real-transcripts), captured as a container
// would and stored through the API: what the viewer's stored-session reader is tested on.
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { captureSession, claudeSessionLocation, toTransport } from "@stowage/sessions";
import { encodePng, type RealRecord, type RealTranscripts, tempDirectory } from "@stowage/test-support";
import type { TestApp } from "./test-app.js";

/** The real Claude Code 2.1.7 transcript with a subagent, and that subagent's own transcript. */
export const CLAUDE_MAIN = "claude-code/incremental-subagents/turn-2.jsonl";
export const CLAUDE_SUBAGENT = "claude-code/incremental-subagents/turn-2/subagents/agent-a485154.jsonl";
export const SUBAGENT_ID = "a485154";
/** A real Claude Code 2.0.76 transcript of 1.4 MB with messages typed while the agent worked. */
const CLAUDE_LARGE = "claude-code/session-3fe1b6bc.jsonl";
export const CODEX_ROLLOUT = "codex/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl";

/** A real 320×200 PNG, different for every `seed`: a band of colour on white. */
function testPng(seed: number): Buffer {
  const colour = [(seed * 67) % 256, (seed * 151) % 256, (seed * 29) % 256] as const;
  return encodePng(320, 200, (x, y) => ((x + y + seed) % 40 < 20 ? colour : [255, 255, 255]));
}

/**
 * The transcript's records with a real PNG in every fifth tool result, as Claude Code's `Read`
 * writes an image: an `image` block in the result's content and its copy in `toolUseResult.file`.
 */
function claudeWithReadImages(records: RealRecord[]): RealRecord[] {
  let results = 0;
  for (const record of records) {
    const content = record.message?.content;
    if (record.type !== "user" || !Array.isArray(content) || content[0]?.type !== "tool_result") continue;
    if (results++ % 5 !== 0) continue;
    const png = testPng(results);
    const base64 = png.toString("base64");
    content[0].content = [
      { type: "image", source: { type: "base64", data: base64, media_type: "image/png" } },
    ];
    record.toolUseResult = {
      type: "image",
      file: { base64, type: "image/png", originalSize: png.byteLength },
    };
  }
  return records;
}

/**
 * The rollout's records with one real PNG pasted in each prompt the user typed, as Codex writes a
 * pasted image: in the prompt's `user_message` event and in its `response_item` message (the one
 * whose text is the prompt's; the injected AGENTS.md message gets none).
 */
function codexWithPastedImages(records: RealRecord[]): RealRecord[] {
  const prompts = records.filter((record) => record.payload?.type === "user_message");
  prompts.forEach((event, index) => {
    const url = `data:image/png;base64,${testPng(200 + index).toString("base64")}`;
    event.payload.images = [url];
    const item = records.find(
      (record) =>
        record.payload?.type === "message" &&
        record.payload.role === "user" &&
        record.payload.content?.[0]?.text === event.payload.message,
    );
    item?.payload.content.push({ type: "input_image", image_url: url });
  });
  return records;
}

const jsonl = (records: readonly RealRecord[]) =>
  `${records.map((record) => JSON.stringify(record)).join("\n")}\n`;

/** A stored session: its id, the request it was stored for, and its files as written. */
export interface StoredRealSession {
  sessionId: string;
  requestId: string;
  /** Each file's path in the stored session and the bytes the agent's directory held. */
  files: Map<string, Buffer>;
  /** The main transcript's records as stored (with the PNGs put in, where there are some). */
  records: RealRecord[];
}

async function writeFiles(root: string, files: Map<string, Buffer>) {
  for (const [path, bytes] of files) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), bytes);
  }
}

async function store(
  app: TestApp,
  key: string,
  requestId: string,
  captured: Parameters<typeof toTransport>[0],
) {
  const response = await app.call(`/requests/${requestId}/session-blobs`, {
    key,
    json: toTransport(captured),
  });
  if (response.status !== 201)
    throw new Error(`storing ${requestId}: ${response.status} ${await response.text()}`);
}

/**
 * Captures and stores, for `key`'s principal: the Claude Code session with its subagent (the
 * files as the agent wrote them), the large Claude Code session (real PNGs in some of its real
 * tool results, as `Read` writes them), and the Codex rollout (a PNG pasted in each real prompt).
 */
export async function storeRealSessions(app: TestApp, key: string, real: RealTranscripts) {
  const base = await tempDirectory("stowage-real-stored-");
  const configDir = join(base, ".claude");
  const cwd = join(base, "workspace");
  await mkdir(cwd, { recursive: true });

  const claude = async (
    main: string,
    subagents: Record<string, string>,
    requestId: string,
    images: boolean,
  ) => {
    // With images, its records with PNGs put in; else the file's own bytes.
    const records = images ? claudeWithReadImages(real.records(main)) : real.records(main);
    const sessionId = records.find((record) => typeof record.sessionId === "string")!.sessionId as string;
    const location = await claudeSessionLocation({ configDir, cwd, sessionId });
    const transcript = images ? Buffer.from(jsonl(records)) : Buffer.from(real.read(main));
    const files = new Map<string, Buffer>([[`${sessionId}.jsonl`, transcript]]);
    for (const [agentId, file] of Object.entries(subagents)) {
      files.set(`${sessionId}/subagents/agent-${agentId}.jsonl`, Buffer.from(real.read(file)));
    }
    await writeFiles(location.projectDir, files);
    await store(app, key, requestId, await captureSession({ configDir, cwd, sessionId }));
    return { sessionId, requestId, files, records } satisfies StoredRealSession;
  };

  const codexHome = join(base, ".codex");
  const rolloutRecords = codexWithPastedImages(real.records(CODEX_ROLLOUT));
  const codexId = rolloutRecords[0]!.payload.id as string;
  const rolloutPath = `2026/05/11/${CODEX_ROLLOUT.slice("codex/".length)}`;
  const codexFiles = new Map([[rolloutPath, Buffer.from(jsonl(rolloutRecords))]]);
  await writeFiles(join(codexHome, "sessions"), codexFiles);

  const withSubagent = await claude(
    CLAUDE_MAIN,
    { [SUBAGENT_ID]: CLAUDE_SUBAGENT },
    "req-real-subagents",
    false,
  );
  const large = await claude(CLAUDE_LARGE, {}, "req-real-large", true);
  await store(
    app,
    key,
    "req-real-codex",
    await captureSession({ agent: "codex", codexHome, sessionId: codexId }),
  );
  const codex: StoredRealSession = {
    sessionId: codexId,
    requestId: "req-real-codex",
    files: codexFiles,
    records: rolloutRecords,
  };
  return { withSubagent, large, codex };
}
