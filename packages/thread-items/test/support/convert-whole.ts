import {
  type ClaudeCodeTranscriptOptions,
  createClaudeCodeTranscriptConverter,
} from "../../src/adapters/claude-code-transcript.js";
import { type CodexRolloutOptions, createCodexRolloutConverter } from "../../src/adapters/codex-rollout.js";
import { type ConversionResult, convertTranscript } from "../../src/adapters/conversion.js";
import { createPiSessionConverter, type PiSessionOptions } from "../../src/adapters/pi-session.js";

// Whole-file conversions, written as a caller writes them: `convertTranscript(input, createXConverter(options))`.

export const convertClaudeCodeTranscript = (
  input: string | Uint8Array,
  options?: ClaudeCodeTranscriptOptions,
): ConversionResult => convertTranscript(input, createClaudeCodeTranscriptConverter(options));

export const convertCodexRollout = (
  input: string | Uint8Array,
  options?: CodexRolloutOptions,
): ConversionResult => convertTranscript(input, createCodexRolloutConverter(options));

export const convertPiSession = (input: string | Uint8Array, options?: PiSessionOptions): ConversionResult =>
  convertTranscript(input, createPiSessionConverter(options));
