import { agentSdkStream } from "./agent-sdk-fixture.js";
import { claudeCodeTranscript } from "./claude-code-fixture.js";
import { codexRollout } from "./codex-fixture.js";
import type { ExpectedSession } from "./expected.js";
import { Prng } from "./prng.js";
import { sessionScript } from "./session-script.js";

export interface Fixture {
  /** File name under `test/fixtures/`. */
  file: string;
  jsonl: string;
  expected: ExpectedSession;
}

/** Bytes of the long `npm install` output: over the 350,000-byte budget, so that it must be cut. */
export const LONG_OUTPUT_BYTES = 380_000;

const script = (seed: number) =>
  sessionScript(new Prng(seed), {
    turns: 12,
    longOutputBytes: LONG_OUTPUT_BYTES,
    images: true,
    toolsPerTurn: [7, 13],
  });

/** The three committed fixtures, rebuilt from their seeds (the same bytes on every run). */
export function buildFixtures(): Fixture[] {
  return [
    { file: "claude-code-session.jsonl", ...claudeCodeTranscript(new Prng(101), script(1)) },
    { file: "claude-agent-sdk-stream.jsonl", ...agentSdkStream(new Prng(202), script(2)) },
    { file: "codex-rollout.jsonl", ...codexRollout(new Prng(303), script(3)) },
  ];
}

/**
 * A long Claude Code transcript for the benchmark: no images or huge outputs, enough turns that
 * converting it yields at least `minimumItems` items (about 27 items a turn).
 */
export function longClaudeCodeTranscript(turns: number): string {
  const random = new Prng(404);
  const session = sessionScript(random, { turns, longOutputBytes: 0, images: false, toolsPerTurn: [8, 14] });
  return claudeCodeTranscript(random, session, { tornLastLine: false }).jsonl;
}

/** A long Codex rollout for the benchmark, built like {@link longClaudeCodeTranscript}. */
export function longCodexRollout(turns: number): string {
  const random = new Prng(505);
  const session = sessionScript(random, { turns, longOutputBytes: 0, images: false, toolsPerTurn: [8, 14] });
  return codexRollout(random, session).jsonl;
}
