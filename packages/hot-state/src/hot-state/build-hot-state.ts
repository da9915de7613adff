import { consoleLogger, describeValue, type Logger, pushAll, StowageError } from "@stowage/core";
import { type ContextBudget, resolveBudget } from "../budget/context-budget.js";
import type { ContentRef, HotState } from "../schemas/hot-state-schema.js";
import { HotStateSchema } from "../schemas/hot-state-schema.js";
import { parseOrThrow } from "../schemas/validation-error.js";
import {
  assertTokenCounter,
  DEFAULT_TOKEN_COUNTER,
  measureTokensUpTo,
  type TokenCounter,
} from "../tokens/token-counter.js";
import { deepFreeze } from "./deep-freeze.js";
import { runInSlices, runToEnd, type Steps } from "./run-steps.js";
import { MINIMAL_HOT_STATE_FIELDS, SHED_STEPS, type ShedItem, type ShedStep } from "./shed-steps.js";

/** Options of `buildHotState`. */
export interface BuildHotStateOptions {
  /** Limits; `maxHotStateTokens` and `maxArtifactIndexEntries` apply here. */
  budget?: Partial<ContextBudget>;
  /** Default: the exact o200k_base counter. */
  countTokens?: TokenCounter;
  /** Where shedding is reported; default `consoleLogger`. */
  logger?: Logger;
}

/** A validated hot state fitted to its budget, with its JSON and what was shed. */
export interface HotStateBuild {
  /** The validated state that fits the budget; deeply frozen. */
  state: Readonly<HotState>;
  /** `state` as compact JSON, the text to put in the prompt. */
  json: string;
  /** Tokens of `json`. */
  tokens: number;
  /** UTF-8 bytes of `json`. */
  bytes: number;
  /** Everything removed from the input, in the order it was removed. */
  shed: readonly ShedItem[];
  /** True when anything was shed. */
  truncated: boolean;
  /** True when only the identifiers were kept. */
  minimal: boolean;
}

const FIELD_ORDER = Object.keys(HotStateSchema.shape) as (keyof HotState)[];

/** Keeps the most recent entry of each artifact and at most `max` entries, the most recent ones. */
function trimIndex(entries: readonly ContentRef[], max: number, shed: ShedItem[]): ContentRef[] {
  const lastPosition = new Map<string, number>();
  for (const [position, entry] of entries.entries()) lastPosition.set(entry.artifact_id, position);
  const unique: ContentRef[] = [];
  for (const [position, entry] of entries.entries()) {
    if (lastPosition.get(entry.artifact_id) === position) unique.push(entry);
    else
      shed.push({
        field: "artifact_index",
        reason: "duplicate",
        value: entry,
        artifact_id: entry.artifact_id,
      });
  }
  const over = Math.max(0, unique.length - max);
  for (const entry of unique.slice(0, over)) {
    shed.push({
      field: "artifact_index",
      reason: "max_entries",
      value: entry,
      artifact_id: entry.artifact_id,
    });
  }
  return unique.slice(over);
}

/**
 * Validates `input` against the strict hot-state schema, then fits it to the budget. Index
 * entries over `maxArtifactIndexEntries` (and older duplicates) go first; then, while the JSON is
 * over `maxHotStateTokens`, whole units are shed in {@link SHED_ORDER}, each step oldest first
 * and no more than needed. Only when all of that is not enough does it fall back to the minimal
 * state (`session_id` and the other identifiers). Every removal is listed in `shed` and logged.
 * With the exact counter (the default), a text is counted only as far as the budget needs: a
 * count stops once it is past `maxHotStateTokens`, and a text too long to fit even in tokens of
 * the vocabulary's longest is not counted at all, so a maximal input costs little more than a
 * state at the limit.
 *
 * Throws INVALID_INPUT for an invalid state or budget, and BUDGET_EXCEEDED when even the
 * minimal state is over budget or the counter fails (reason `UNMEASURABLE`): a state that cannot
 * be measured is never returned as fitting.
 */
export function buildHotState(input: unknown, options: BuildHotStateOptions = {}): HotStateBuild {
  return runToEnd(fitHotState(input, options));
}

/**
 * {@link buildHotState} in slices that let the event loop go on: what a server's write runs, so
 * that fitting a maximal state never holds its other requests. ABORTED when `signal` fires.
 */
export function buildHotStateInSlices(
  input: unknown,
  options: BuildHotStateOptions = {},
  signal?: AbortSignal,
): Promise<HotStateBuild> {
  return runInSlices(fitHotState(input, options), { signal, what: "build the hot state" });
}

/**
 * The work of {@link buildHotState}, pausing between bounded steps: every count is of one JSON
 * text and stops once it is past the budget (a text far over it is not counted at all), so a
 * maximal input costs a handful of short counts, not seconds of counting.
 */
function* fitHotState(input: unknown, options: BuildHotStateOptions): Steps<HotStateBuild> {
  const budget = resolveBudget(options.budget);
  const counter = options.countTokens ?? DEFAULT_TOKEN_COUNTER;
  assertTokenCounter(counter);
  const logger = options.logger ?? consoleLogger;
  const limit = budget.maxHotStateTokens;

  let state: HotState = parseOrThrow(HotStateSchema, input, "hot state");
  const shed: ShedItem[] = [];
  if (state.artifact_index) {
    state = {
      ...state,
      artifact_index: trimIndex(state.artifact_index, budget.maxArtifactIndexEntries, shed),
    };
    if (state.artifact_index!.length === 0 && shed.length > 0) delete state.artifact_index;
  }

  yield;
  // Counted up to the limit: every decision is "within it or not", and a count past the limit
  // goes no further (the count of a state that fits, the one kept, is exact).
  const measureUpTo = function* (candidate: HotState, max: number): Steps<Measured> {
    // The schema's output has its fields in schema order and shedding keeps that order, so equal
    // states serialize to equal JSON whatever order the input had.
    const json = JSON.stringify(candidate);
    yield;
    const what = `hot state of session ${describeValue(candidate.session_id)}`;
    return { json, tokens: yield* measureTokensUpTo(counter, json, max, what) };
  };
  const measure = (candidate: HotState) => measureUpTo(candidate, limit);

  let measured = yield* measure(state);
  let minimal = false;
  if (measured.tokens > limit) {
    const fitted = yield* shedToFit(state, measured, limit, measure);
    pushAll(shed, fitted.shed);
    state = fitted.state;
    measured = fitted.measured;
    if (measured.tokens > limit) {
      const kept: HotState = { session_id: state.session_id };
      for (const field of MINIMAL_HOT_STATE_FIELDS) {
        if (state[field] !== undefined) Object.assign(kept, { [field]: state[field] });
      }
      for (const field of FIELD_ORDER) {
        if (state[field] !== undefined && kept[field] === undefined) {
          shed.push({ field: field as ShedItem["field"], reason: "minimal_fallback", value: state[field] });
        }
      }
      state = kept;
      // Counted whole (it is identifiers only): the error says how far over it is.
      measured = yield* measureUpTo(state, Number.POSITIVE_INFINITY);
      minimal = true;
      if (measured.tokens > limit) {
        throw new StowageError(
          "BUDGET_EXCEEDED",
          `hot state of session ${describeValue(state.session_id)} does not fit maxHotStateTokens of ${limit} even as the minimal state (${measured.tokens} tokens of identifiers); raise the budget or shorten the ids`,
          { details: { tokens: measured.tokens, limit } },
        );
      }
    }
  }

  if (shed.length > 0) {
    logger.warn(
      {
        tokens: measured.tokens,
        maxHotStateTokens: limit,
        shed: shed.map(({ field, reason, artifact_id }) => ({ field, reason, artifact_id })),
      },
      `hot state of session ${describeValue(state.session_id)} was cut to fit its budget: ${shed.length} item(s) shed${minimal ? ", fell back to the minimal state" : ""}`,
    );
  }
  return Object.freeze({
    state: deepFreeze(state),
    json: measured.json,
    tokens: measured.tokens,
    bytes: Buffer.byteLength(measured.json),
    shed: deepFreeze(shed),
    truncated: shed.length > 0,
    minimal,
  });
}

type Measured = { json: string; tokens: number };
type Measure = (state: HotState) => Steps<Measured>;

/**
 * Runs the shedding steps until the state fits. Within a step, a binary search finds the fewest
 * units to remove (removing more never makes the JSON longer), so a long list costs a handful of
 * counts, not one per item.
 */
function* shedToFit(
  start: HotState,
  startMeasured: Measured,
  limit: number,
  measure: Measure,
): Steps<{ state: HotState; shed: ShedItem[]; measured: Measured }> {
  let state = start;
  let measured = startMeasured;
  const shed: ShedItem[] = [];
  for (const step of SHED_STEPS) {
    const units = step.units(state);
    if (units === 0) continue;
    const fewest = yield* fewestUnitsThatFit(step, state, units, limit, measure);
    state = fewest.applied.state;
    pushAll(shed, fewest.applied.shed);
    measured = fewest.measured;
    if (measured.tokens <= limit) break;
  }
  return { state, shed, measured };
}

function* fewestUnitsThatFit(
  step: ShedStep,
  state: HotState,
  units: number,
  limit: number,
  measure: Measure,
) {
  const all = step.apply(state, units);
  let best = { applied: all, measured: yield* measure(all.state) };
  if (best.measured.tokens > limit) return best;
  let low = 1;
  let high = units;
  while (low < high) {
    const middle = (low + high) >>> 1;
    const applied = step.apply(state, middle);
    const measured = yield* measure(applied.state);
    if (measured.tokens <= limit) {
      high = middle;
      best = { applied, measured };
    } else low = middle + 1;
  }
  return best;
}
