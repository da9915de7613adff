import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { buildHotState } from "../../src/hot-state/build-hot-state.js";
import type { HotState } from "../../src/schemas/schemas.js";
import { countTokensExact } from "../../src/tokens/token-counter.js";
import { captureLogger } from "../capture-logger.js";
import { hexIds } from "../corpora.js";

/** The README's shedding order. */
const SHED_ORDER: string[] = [
  "artifact_index.summary",
  "accepted_decisions",
  "artifact_index",
  "open_questions",
  "last_successful_step",
];

// One token per character: makes budget arithmetic in these tests exact.
const byChars = (text: string) => text.length;
const ids = hexIds(40);
const entry = (i: number, summary = true) => ({
  artifact_id: ids[i]!,
  type: "code" as const,
  label: `file-${i}.ts`,
  ...(summary ? { summary: `summary of file ${i}` } : {}),
});

const rich: HotState = {
  session_id: "sess-1",
  session_key: "agent:main",
  run_id: "run-1",
  objective: "Ship the parser",
  current_plan_id: "plan-3",
  accepted_decisions: ["decision 0", "decision 1", "decision 2"],
  open_questions: ["question 0", "question 1"],
  constraints: ["no network"],
  last_successful_step: "step 9 passed",
  risk_level: "high",
  artifact_index: [entry(0), entry(1), entry(2)],
};
const fullLength = JSON.stringify(rich).length;

describe("buildHotState within budget", () => {
  it("returns the validated state unchanged, with its JSON, tokens and bytes", () => {
    const logger = captureLogger();
    const build = buildHotState(rich, { logger });
    expect(build.state).toEqual(rich);
    expect(build.json).toBe(JSON.stringify(rich));
    expect(build.tokens).toBe(countTokensExact(build.json));
    expect(build.bytes).toBe(Buffer.byteLength(build.json));
    expect(build.shed).toEqual([]);
    expect(build.truncated).toBe(false);
    expect(build.minimal).toBe(false);
    expect(logger.lines).toEqual([]);
  });

  it("serializes fields in schema order whatever the input order", () => {
    const reversed = Object.fromEntries(Object.entries(rich).reverse());
    expect(buildHotState(reversed).json).toBe(JSON.stringify(rich));
  });

  it("returns a deeply frozen state and never mutates the input", () => {
    const input = structuredClone(rich);
    const build = buildHotState(input, { budget: { maxArtifactIndexEntries: 1 }, logger: captureLogger() });
    expect(input).toEqual(rich);
    expect(() => {
      (build.state.accepted_decisions as string[]).push("sneaky");
    }).toThrow(TypeError);
    expect(() => {
      (build.state.artifact_index![0] as { label?: string }).label = "x";
    }).toThrow(TypeError);
    expect(Object.isFrozen(build.shed)).toBe(true);
  });
});

describe("buildHotState validation", () => {
  it("refuses an invalid state with INVALID_INPUT naming every bad field", async () => {
    const err = await expectStowageError(
      () =>
        buildHotState({
          session_id: "",
          risk_level: "extreme",
          artifact_index: [{ artifact_id: "../x", type: "doc" }],
        }),
      "INVALID_INPUT",
    );
    const paths = (err.details!.issues as { path: string }[]).map((issue) => issue.path);
    expect(paths).toEqual(
      expect.arrayContaining(["session_id", "risk_level", "artifact_index[0].artifact_id"]),
    );
  });

  it("refuses a bad budget or counter", async () => {
    await expectStowageError(
      () => buildHotState(rich, { budget: { maxHotStateTokens: -5 } }),
      "INVALID_INPUT",
    );
    await expectStowageError(() => buildHotState(rich, { countTokens: "exact" as never }), "INVALID_INPUT");
  });
});

describe("buildHotState index limits", () => {
  it("keeps the most recent maxArtifactIndexEntries entries and lists the others as shed", () => {
    const state = { session_id: "s", artifact_index: ids.slice(0, 25).map((_, i) => entry(i, false)) };
    const build = buildHotState(state, {
      budget: { maxArtifactIndexEntries: 20, maxHotStateTokens: 100_000 },
      logger: captureLogger(),
    });
    expect(build.state.artifact_index!.map((e) => e.artifact_id)).toEqual(ids.slice(5, 25));
    expect(build.shed.map((item) => [item.field, item.reason, item.artifact_id])).toEqual(
      ids.slice(0, 5).map((id) => ["artifact_index", "max_entries", id]),
    );
    expect(build.truncated).toBe(true);
  });

  it("keeps the most recent entry of a repeated artifact", () => {
    const newer = { ...entry(0), label: "renamed.ts" };
    const build = buildHotState(
      { session_id: "s", artifact_index: [entry(0), entry(1), newer] },
      { logger: captureLogger() },
    );
    expect(build.state.artifact_index).toEqual([entry(1), newer]);
    expect(build.shed).toEqual([
      { field: "artifact_index", reason: "duplicate", value: entry(0), artifact_id: ids[0] },
    ]);
  });

  it("allows a zero-entry index budget", () => {
    const build = buildHotState(
      { session_id: "s", artifact_index: [entry(0)] },
      { budget: { maxArtifactIndexEntries: 0 }, logger: captureLogger() },
    );
    expect(build.state).toEqual({ session_id: "s" });
    expect(build.shed).toHaveLength(1);
  });
});

describe("buildHotState shedding order", () => {
  const build = (limit: number) =>
    buildHotState(rich, {
      budget: { maxHotStateTokens: limit },
      countTokens: byChars,
      logger: captureLogger(),
    });

  it("sheds the oldest index summary first, and only as much as needed", () => {
    const result = build(fullLength - 1);
    expect(result.shed).toEqual([
      { field: "artifact_index.summary", reason: "tokens", value: "summary of file 0", artifact_id: ids[0] },
    ]);
    expect(result.state.artifact_index![0]).toEqual(entry(0, false));
    expect(result.state.artifact_index![1]).toEqual(entry(1));
    expect(result.tokens).toBeLessThanOrEqual(fullLength - 1);
  });

  it("then the oldest accepted decisions, then whole index entries, then questions, then the last step", () => {
    const noSummaries = JSON.stringify({
      ...rich,
      artifact_index: [entry(0, false), entry(1, false), entry(2, false)],
    });
    const result = build(noSummaries.length - 1);
    expect(result.shed.map((item) => [item.field, item.value])).toEqual([
      ["artifact_index.summary", "summary of file 0"],
      ["artifact_index.summary", "summary of file 1"],
      ["artifact_index.summary", "summary of file 2"],
      ["accepted_decisions", "decision 0"],
    ]);
    expect(result.state.accepted_decisions).toEqual(["decision 1", "decision 2"]);

    const noDecisions = JSON.parse(noSummaries) as HotState;
    delete noDecisions.accepted_decisions;
    const deeper = build(JSON.stringify(noDecisions).length - 1);
    expect(deeper.shed.map((item) => item.field)).toEqual([
      "artifact_index.summary",
      "artifact_index.summary",
      "artifact_index.summary",
      "accepted_decisions",
      "accepted_decisions",
      "accepted_decisions",
      "artifact_index",
    ]);
    expect(deeper.state.accepted_decisions).toBeUndefined();
    expect(deeper.state.artifact_index!.map((e) => e.artifact_id)).toEqual([ids[1], ids[2]]);
  });

  it("keeps to the stated order at every budget, removing oldest first, until the minimal fallback", () => {
    const minimalLength = JSON.stringify({
      session_id: rich.session_id,
      session_key: rich.session_key,
      run_id: rich.run_id,
      current_plan_id: rich.current_plan_id,
    }).length;
    for (let limit = fullLength; limit >= minimalLength; limit -= 3) {
      const result = build(limit);
      expect(result.tokens).toBeLessThanOrEqual(limit);
      const steps = result.shed.map((item) => SHED_ORDER.indexOf(item.field));
      if (result.minimal) {
        expect(result.shed.at(-1)!.reason).toBe("minimal_fallback");
        expect(Object.keys(result.state).sort()).toEqual([
          "current_plan_id",
          "run_id",
          "session_id",
          "session_key",
        ]);
        continue;
      }
      expect(steps).toEqual([...steps].sort((a, b) => a - b));
      expect(steps.every((step) => step >= 0)).toBe(true);
      // The objective, constraints and risk level survive everything short of the fallback.
      expect(result.state.objective).toBe(rich.objective);
      expect(result.state.constraints).toEqual(rich.constraints);
      expect(result.state.risk_level).toBe(rich.risk_level);
      const decisions = result.shed
        .filter((item) => item.field === "accepted_decisions")
        .map((item) => item.value);
      expect(decisions).toEqual(rich.accepted_decisions!.slice(0, decisions.length));
    }
  });

  it("sheds no more than needed: putting back the last shed item would not fit", () => {
    const noSummaries = JSON.stringify({
      ...rich,
      artifact_index: [entry(0, false), entry(1, false), entry(2, false)],
    });
    const limit = noSummaries.length - 15;
    const result = build(limit);
    const decisionsShed = result.shed.filter((item) => item.field === "accepted_decisions").length;
    expect(decisionsShed).toBeGreaterThan(0);
    const oneFewer = {
      ...result.state,
      accepted_decisions: rich.accepted_decisions!.slice(decisionsShed - 1),
    };
    expect(JSON.stringify(oneFewer).length).toBeGreaterThan(limit);
  });

  it("falls back to session_id and identifiers only when nothing else fits, listing what it dropped", () => {
    const logger = captureLogger();
    const state = { ...rich, objective: "o".repeat(2000) };
    const result = buildHotState(state, { budget: { maxHotStateTokens: 150 }, countTokens: byChars, logger });
    expect(result.minimal).toBe(true);
    expect(result.state).toEqual({
      session_id: "sess-1",
      session_key: "agent:main",
      run_id: "run-1",
      current_plan_id: "plan-3",
    });
    const fallback = result.shed.filter((item) => item.reason === "minimal_fallback");
    expect(fallback.map((item) => item.field).sort()).toEqual(["constraints", "objective", "risk_level"]);
    expect(fallback.find((item) => item.field === "objective")!.value).toBe(state.objective);
    // Everything that was in the input is accounted for.
    expect(result.shed.filter((item) => item.field === "accepted_decisions")).toHaveLength(3);
    expect(result.shed.filter((item) => item.field === "open_questions")).toHaveLength(2);
    expect(result.shed.filter((item) => item.field === "artifact_index")).toHaveLength(3);
    expect(result.shed.filter((item) => item.field === "last_successful_step")).toHaveLength(1);
    expect(logger.lines).toHaveLength(1);
    expect(logger.lines[0]!.message).toContain("minimal state");
    expect((logger.lines[0]!.details!.shed as unknown[]).length).toBe(result.shed.length);
  });

  it("fails with BUDGET_EXCEEDED when even the minimal state does not fit", async () => {
    const err = await expectStowageError(
      () => buildHotState(rich, { budget: { maxHotStateTokens: 5 }, logger: captureLogger() }),
      "BUDGET_EXCEEDED",
    );
    expect(err.details).toMatchObject({ limit: 5 });
  });

  it("needs only a few counts for a long list (binary search, not one count per item)", () => {
    let calls = 0;
    const counting = (text: string) => {
      calls++;
      return text.length;
    };
    const state = {
      session_id: "s",
      accepted_decisions: Array.from({ length: 200 }, (_, i) => `decision number ${i}`),
    };
    const result = buildHotState(state, {
      budget: { maxHotStateTokens: 500 },
      countTokens: counting,
      logger: captureLogger(),
    });
    expect(result.tokens).toBeLessThanOrEqual(500);
    expect(result.state.accepted_decisions!.at(-1)).toBe("decision number 199");
    expect(calls).toBeLessThan(15);
  });
});

describe("buildHotState with the exact counter", () => {
  it("fits a maxed state of 20 entries under 1,000 tokens: summaries first, then the oldest entries", () => {
    // A 64-hex id alone costs ~36 o200k tokens, so 20 labelled entries are over 1,000 tokens
    // by themselves; chars / 4 would have claimed they fit.
    const state = {
      session_id: "sess-42",
      objective: "Migrate the storage layer to content-addressed artifacts",
      artifact_index: ids.slice(0, 20).map((id, i) => ({
        artifact_id: id,
        type: "doc" as const,
        label: `docs/design-${i}.md`,
        summary: `Design notes ${i}: trade-offs of the sharded layout, the record format and recovery after a crash.`,
      })),
    };
    const bare = JSON.stringify({
      ...state,
      artifact_index: state.artifact_index.map(({ summary: _summary, ...rest }) => rest),
    });
    expect(Math.ceil(bare.length / 4)).toBeLessThan(1000);
    expect(countTokensExact(bare)).toBeGreaterThan(1000);

    const logger = captureLogger();
    const result = buildHotState(state, { logger });
    expect(result.tokens).toBeLessThanOrEqual(1000);
    expect(result.tokens).toBe(countTokensExact(result.json));
    const fields = result.shed.map((item) => item.field);
    expect(fields.slice(0, 20)).toEqual(Array(20).fill("artifact_index.summary"));
    expect(new Set(fields.slice(20))).toEqual(new Set(["artifact_index"]));
    const kept = result.state.artifact_index!.map((e) => e.artifact_id);
    expect(kept).toEqual(ids.slice(20 - kept.length, 20));
    expect(kept.length).toBeGreaterThanOrEqual(15);
    expect(result.state.objective).toBe(state.objective);
    expect(logger.lines).toHaveLength(1);
  });
});

describe("buildHotState fails closed when tokens cannot be counted", () => {
  it.each([
    [
      "throws",
      () => {
        throw new Error("tokenizer crashed");
      },
    ],
    ["returns NaN", () => Number.NaN],
    ["returns a negative number", () => -1],
    ["returns a fraction", () => 0.5],
  ])("a counter that %s gives BUDGET_EXCEEDED (UNMEASURABLE), never a state", async (_why, counter) => {
    await expectStowageError(
      () => buildHotState(rich, { countTokens: counter, logger: captureLogger() }),
      "BUDGET_EXCEEDED",
      "UNMEASURABLE",
    );
  });
});
