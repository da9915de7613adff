import { toolResultItem } from "../builders/build-items.js";
import type { ThreadItem } from "../schema/thread-item-schema.js";
import { type TokenUsage, TurnTracker } from "./turn-tracker.js";

/** What the steps of one Codex rollout's conversion share, line after line. */
export interface CodexState {
  includeUserPrompts: boolean;
  turn: TurnTracker;
  sessionId: string | undefined;
  /** The cumulative `token_count` totals last read. */
  totals: TokenUsage;
  totalsAtTurnStart: TokenUsage;
  /** Whether a token_count with figures arrived in the current turn: without one its figures are unknown. */
  countedInTurn: boolean;
  /** Whether the rollout has task events (then turns follow them, not prompts). */
  taskEvents: boolean;
  /** A prompt is written twice (response_item message, event_msg user_message): the copy still to come. */
  echo: { source: "message" | "event"; text: string } | undefined;
  /**
   * Outputs of commands still running, held until they exit (or the input ends): a result given
   * earlier would call a command that then fails a success.
   */
  running: Map<string, string>;
  /** Exit codes that arrived before their call's output. */
  exits: Map<string, number>;
  /** Patch outcomes that arrived before their call's output. */
  patches: Map<string, boolean>;
  /** Tool names by call id: Codex reports a call it could not run as `<tool> failed: <why>`. */
  names: Map<string, string>;
  /** Ids of web searches whose end event came before the search item (which has no id). */
  searches: { id: string; query: unknown }[];
  unnamedSearches: number;
}

export function createCodexState(includeUserPrompts: boolean): CodexState {
  const totals: TokenUsage = { input: 0, cached: 0, output: 0 };
  return {
    includeUserPrompts,
    turn: new TurnTracker(),
    sessionId: undefined,
    totals,
    totalsAtTurnStart: totals,
    countedInTurn: false,
    taskEvents: false,
    echo: undefined,
    running: new Map(),
    exits: new Map(),
    patches: new Map(),
    names: new Map(),
    searches: [],
    unnamedSearches: 0,
  };
}

const subtract = (later: TokenUsage, earlier: TokenUsage): TokenUsage => ({
  input: Math.max(0, later.input - earlier.input),
  cached: Math.max(0, later.cached - earlier.cached),
  output: Math.max(0, later.output - earlier.output),
});

export function beginTurn(state: CodexState, timestamp: unknown): void {
  state.turn.begin(timestamp);
  state.totalsAtTurnStart = state.totals;
  state.countedInTurn = false;
}

/** Closes the turn: its tokens are the growth of the totals since it began (unknown without a count). */
export function finishTurn(state: CodexState, timestamp?: unknown): ThreadItem[] {
  state.exits.clear();
  state.patches.clear();
  state.names.clear();
  const usage = state.countedInTurn ? subtract(state.totals, state.totalsAtTurnStart) : null;
  return state.turn.close({ usage, at: timestamp });
}

/** Agent activity: opens a turn when none is open. */
export function activity(state: CodexState, timestamp: unknown): void {
  if (!state.turn.open) beginTurn(state, timestamp);
  state.turn.activity(timestamp);
}

export function countTokens(state: CodexState, totals: TokenUsage): void {
  state.totals = totals;
  state.countedInTurn = true;
}

/** At the end of input, results of commands that never reported their exit: their output so far. */
export function releaseRunning(state: CodexState): ThreadItem[] {
  const items: ThreadItem[] = [];
  for (const [id, output] of state.running) items.push(toolResultItem({ invocationId: id, output }));
  state.running.clear();
  return items;
}
