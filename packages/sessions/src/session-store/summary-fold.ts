import { createRequire } from "node:module";
import { StowageError } from "@stowage/core";
import type { SessionKey, SessionStoreEntry, SessionSummaryEntry } from "./types.js";

/** The SDK, an optional peer: only `foldSessionSummary` is used, so that summaries match the SDK's. */
const SDK = "@anthropic-ai/claude-agent-sdk";

type Fold = (
  previous: SessionSummaryEntry | undefined,
  key: SessionKey,
  entries: SessionStoreEntry[],
  options?: { mtime?: number },
) => SessionSummaryEntry;

function peerMissing(cause: unknown): StowageError {
  return new StowageError(
    "UNAVAILABLE",
    `${SDK} is not installed; add it to your dependencies to use a SessionStore (it folds session summaries)`,
    { cause, reason: "PEER_MISSING" },
  );
}

/**
 * Throws UNAVAILABLE with reason PEER_MISSING unless the SDK can be resolved from here: a store's
 * factory calls it, so a missing SDK fails at construction with a clear error, not mid-append.
 * `name` is for tests.
 */
export function assertAgentSdkInstalled(name = SDK): void {
  try {
    createRequire(import.meta.url).resolve(name);
  } catch (err) {
    throw peerMissing(err);
  }
}

let fold: Promise<Fold> | undefined;

/** The SDK's `foldSessionSummary`, imported on first use. */
export function loadSummaryFold(): Promise<Fold> {
  fold ??= import(SDK).then(
    (sdk: { foldSessionSummary: Fold }) => sdk.foldSessionSummary,
    (err: unknown) => {
      fold = undefined;
      throw peerMissing(err);
    },
  );
  return fold;
}
