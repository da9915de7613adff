import { createMemoryObjectStore } from "@stowage/core";
import { expectStowageError } from "@stowage/core/testing";
import { jsonParseCostMs, watchLoopHolds } from "@stowage/test-support";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { O200K_TOKEN_SPLIT_REGEX } from "gpt-tokenizer/encodingParams/constants";
import { describe, expect, it } from "vitest";
import {
  buildHotState,
  countTokensExact,
  countTokensExactInSlices,
  createHotStateStore,
  type TokenCounter,
} from "../src/index.js";
import { countO200kUpTo } from "../src/tokens/o200k.js";
import { captureLogger } from "./capture-logger.js";

// Issue 36, item 2: a maximal hot state (every field and list at its schema limit) cost seconds
// of counting on every write, refused ones included, all of it holding the event loop.

// The schema's limits, as the README gives them.
const MAX_ID_CHARS = 256;
const MAX_HOT_STATE_TEXT_CHARS = 2_000;
const MAX_HOT_STATE_LIST_ITEMS = 200;
const MAX_LABEL_CHARS = 200;
const MAX_VERSION_CHARS = 128;
const MAX_CONTENT_SUMMARY_CHARS = 500;
/** The longest unbroken run (pre-tokenized piece) counted, as the README gives it. */
const MAX_PIECE_CHARS = 1_024;

/**
 * The count gpt-tokenizer gives for the whole text (special tokens as plain text), or Infinity
 * when its pre-tokenizer leaves a piece longer than the README's limit: such a text is not counted.
 */
function wholeCount(text: string): number {
  for (const [piece] of text.matchAll(O200K_TOKEN_SPLIT_REGEX)) {
    if (piece.length > MAX_PIECE_CHARS) return Number.POSITIVE_INFINITY;
  }
  return countTokens(text, { disallowedSpecial: new Set() });
}

type Text = (seed: number, length: number) => string;

/** Texts of the kinds that cost a tokenizer differently, each cut to `length` UTF-16 units. */
const TEXTS: [string, Text][] = [
  [
    "random letters (one unbroken word per field)",
    (seed, length) => {
      let state = seed * 7919 + 1;
      let text = "";
      while (text.length < length) {
        state = (state * 1103515245 + 12345) & 0x7fffffff;
        text += String.fromCharCode(97 + ((state >> 16) % 26));
      }
      return text;
    },
  ],
  [
    "prose",
    (seed, length) => `decision ${seed}: keep the parser small and fast. `.repeat(length).slice(0, length),
  ],
  ["spaces", (_, length) => " ".repeat(length)],
  ["punctuation runs (one piece across fields)", (_, length) => "=".repeat(length)],
  ["CJK", (seed, length) => String.fromCharCode(0x4e00 + (seed % 1000)).repeat(length)],
  ["emoji (surrogate pairs)", (_, length) => "😀".repeat(length / 2)],
];

function maximalState(text: Text, sessionId = "sess-max") {
  const list = (from: number) =>
    Array.from({ length: MAX_HOT_STATE_LIST_ITEMS }, (_, i) => text(from + i, MAX_HOT_STATE_TEXT_CHARS));
  return {
    session_id: sessionId,
    session_key: text(1, MAX_ID_CHARS),
    run_id: text(2, MAX_ID_CHARS),
    current_plan_id: text(3, MAX_ID_CHARS),
    objective: text(4, MAX_HOT_STATE_TEXT_CHARS),
    accepted_decisions: list(1_000),
    open_questions: list(2_000),
    constraints: list(3_000),
    last_successful_step: text(5, MAX_HOT_STATE_TEXT_CHARS),
    risk_level: "high",
    artifact_index: Array.from({ length: MAX_HOT_STATE_LIST_ITEMS }, (_, i) => ({
      artifact_id: i.toString(16).padStart(64, "0"),
      type: "doc",
      label: text(4_000 + i, MAX_LABEL_CHARS),
      version: text(5_000 + i, MAX_VERSION_CHARS),
      summary: text(6_000 + i, MAX_CONTENT_SUMMARY_CHARS),
    })),
  };
}

/** A state that fits after shedding: the lists shed down to what fits 1,000 tokens. */
function sheddableState(text: Text) {
  return {
    session_id: "sess-shed",
    objective: text(7, 400),
    accepted_decisions: Array.from({ length: 60 }, (_, i) => text(100 + i, 300)),
    open_questions: Array.from({ length: 60 }, (_, i) => text(200 + i, 300)),
    constraints: [text(8, 200)],
    artifact_index: Array.from({ length: 20 }, (_, i) => ({
      artifact_id: i.toString(16).padStart(64, "0"),
      type: "log",
      summary: text(300 + i, 400),
    })),
  };
}

/**
 * Every text counted whole by gpt-tokenizer, a text it is not allowed to count (a run over the
 * limit) being over any budget: how a state is fitted when counts are not bounded.
 */
const countedWhole: TokenCounter = (text) => Math.min(wholeCount(text), Number.MAX_SAFE_INTEGER);

/** What `build` returned, or the code, reason and details of what it threw. */
function outcome(build: () => unknown): unknown {
  try {
    return build();
  } catch (err) {
    const { code, reason, details } = err as { code?: string; reason?: string; details?: unknown };
    return { threw: { code, reason, details } };
  }
}

const drain = <T>(steps: Generator<void, T, void>) => {
  let pauses = 0;
  for (;;) {
    const step = steps.next();
    if (step.done) return { value: step.value, pauses };
    pauses++;
  }
};

describe("counting up to a budget", () => {
  it.each(TEXTS)("gives the exact count of %s up to the budget, and a number past it beyond", (_, text) => {
    for (const length of [1, 200, 1_000, 5_000, 40_000]) {
      const sample = text(9, length);
      const exact = wholeCount(sample);
      if (exact === Number.POSITIVE_INFINITY) {
        // A run over the limit is over any budget, and never handed to the tokenizer.
        expect(drain(countO200kUpTo(sample, 1_000)).value).toBeGreaterThan(1_000);
        continue;
      }
      expect(drain(countO200kUpTo(sample, exact)).value).toBe(exact);
      expect(drain(countO200kUpTo(sample, exact + 5)).value).toBe(exact);
      if (exact > 0) expect(drain(countO200kUpTo(sample, exact - 1)).value).toBeGreaterThan(exact - 1);
    }
  });

  it("does not count a text too long to fit in tokens of the longest (128 bytes: 128 spaces)", () => {
    // 8 tokens of 128 characters at most: 1,025 characters cannot fit, whatever they are.
    const refused = drain(countO200kUpTo(" ".repeat(1_025), 8));
    expect(refused.value).toBeGreaterThan(8);
    expect(refused.pauses).toBe(0);
    // 1,024 spaces (the longest run counted) are exactly 8 tokens of 128: counted, exactly.
    expect(countTokens(" ".repeat(1_024))).toBe(8);
    expect(drain(countO200kUpTo(" ".repeat(1_024), 8)).value).toBe(8);
  });
});

describe("counting in slices", () => {
  it("gives the exact count, letting timers run meanwhile", async () => {
    const text = "decision 42: keep the parser small. ".repeat(60_000); // 2.16 M characters: many slices
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    try {
      expect(await countTokensExactInSlices(text)).toBe(wholeCount(text));
    } finally {
      clearInterval(timer);
    }
    expect(ticks).toBeGreaterThan(0);
  });

  it("refuses what is not a string, and is ABORTED when its signal fires", async () => {
    await expectStowageError(countTokensExactInSlices(42 as never), "INVALID_INPUT");
    const controller = new AbortController();
    const counting = countTokensExactInSlices("word ".repeat(400_000), { signal: controller.signal });
    controller.abort();
    await expectStowageError(counting, "ABORTED");
  });
});

describe("a maximal hot state", () => {
  it.each(TEXTS)("of %s is fitted to what counting every text whole gives", (_, text) => {
    const logger = captureLogger();
    for (const input of [maximalState(text), sheddableState(text)]) {
      // CJK identifiers of 256 characters are over 1,000 tokens: both refuse the state alike.
      const bounded = outcome(() => buildHotState(input, { logger }));
      const whole = outcome(() => buildHotState(input, { logger, countTokens: countedWhole }));
      expect(bounded).toEqual(whole);
    }
  });

  it("is stored by the store as buildHotState fits it, without holding the event loop", async () => {
    const text = TEXTS[0]![1];
    const input = maximalState(text);
    const expected = buildHotState(input, { logger: captureLogger() });
    // A generous bound for a stall guard: the write used to hold the loop for seconds. 200 ms, or
    // three 14 MiB parses where this machine (slow, or its cores busy with other packages' tests)
    // makes a parse cost more, as the reference app's event-loop guard bounds its holds; alone on
    // a slow machine the write held it 42-58 ms, under the whole suite's load 340-400 ms once.
    const bound = Math.max(200, 3 * jsonParseCostMs());
    // The write twice, each into a new store, the shorter hold counted: a code that holds the loop
    // holds it both times, a burst of load on the machine seldom lands on both.
    const longestHolds: number[] = [];
    for (let attempt = 0; attempt < 2; attempt++) {
      const store = createHotStateStore({ store: createMemoryObjectStore(), logger: captureLogger() });
      // Timer callbacks run only when the loop is free: the main thread's CPU time between two of
      // them is how long the write held it.
      const holds = watchLoopHolds(5);
      try {
        const written = await store.dispatcherFor("sess-max").write(input, { expectedVersion: 0 });
        expect(written).toMatchObject({
          state: expected.state,
          tokens: expected.tokens,
          shed: expected.shed,
          minimal: true,
        });
      } finally {
        holds.stop();
      }
      longestHolds.push(holds.longest());
    }
    expect(Math.min(...longestHolds)).toBeLessThan(bound);
  });

  it("is not counted at all for a write the store refuses: a wrong token, a stale version", async () => {
    let counted = 0;
    const counting: TokenCounter = (text) => {
      counted += text.length;
      return countTokensExact(text);
    };
    const store = createHotStateStore({
      store: createMemoryObjectStore(),
      countTokens: counting,
      logger: captureLogger(),
    });
    const { token } = await store.claimDispatcher("sess-max");
    const state = maximalState(TEXTS[0]![1]);

    await expectStowageError(
      store.dispatcherFor("sess-max", { token: "not-the-token" }).write(state, { expectedVersion: 0 }),
      "FORBIDDEN",
      "NOT_DISPATCHER",
    );
    await expectStowageError(store.dispatcherFor("sess-max").write(state), "FORBIDDEN", "NOT_DISPATCHER");
    expect(counted).toBe(0);

    const dispatcher = store.dispatcherFor("sess-max", { token });
    await dispatcher.write({ session_id: "sess-max", objective: "first" }, { expectedVersion: 0 });
    await dispatcher.write({ session_id: "sess-max", objective: "second" }, { expectedVersion: 1 });
    counted = 0;
    // A dispatcher that read version 1 and missed version 2.
    await expectStowageError(dispatcher.write(state, { expectedVersion: 1 }), "CONFLICT");
    // One that names a version never written.
    await expectStowageError(dispatcher.write(state, { expectedVersion: 7 }), "CONFLICT");
    expect(counted).toBe(0);
  });
});
