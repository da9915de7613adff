import {
  consoleLogger,
  describeValue,
  type Logger,
  runInSlices,
  runToEnd,
  type Steps,
  StowageError,
} from "@stowage/core";
import { type ContextBudget, resolveBudget } from "../budget/context-budget.js";
import { type ContentRef, type HotState, HotStateSchema, parseOrThrow } from "../schemas/schemas.js";
import {
  assertTokenCounter,
  countTokensExact,
  measureTokensUpTo,
  type TokenCounter,
} from "../tokens/token-counter.js";
import { MINIMAL_HOT_STATE_FIELDS, SHED_STEPS, type ShedItem, type ShedReason } from "./shed-steps.js";

/** Options of `buildHotState` (its budget's `maxHotStateTokens` and `maxArtifactIndexEntries` apply). */
export interface BuildHotStateOptions {
  budget?: Partial<ContextBudget>;
  countTokens?: TokenCounter;
  /** Where shedding is reported. */
  logger?: Logger;
}

/**
 * A validated hot state fitted to its budget (deeply frozen), its compact JSON (the prompt's
 * text; `bytes` its UTF-8 length), everything shed (in order) and whether only the ids were kept.
 */
export interface HotStateBuild {
  state: Readonly<HotState>;
  json: string;
  tokens: number;
  bytes: number;
  shed: readonly ShedItem[];
  truncated: boolean;
  minimal: boolean;
}

/** Freezes `value` and everything reachable from it, so that a shared state cannot be edited in place. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

const FIELD_ORDER = Object.keys(HotStateSchema.shape) as (keyof HotState)[];

type Measured = { json: string; tokens: number };
type Measure = (state: HotState, max?: number) => Steps<Measured>;

/** Keeps the most recent entry of each artifact and at most `max` entries, the most recent ones. */
function trimIndex(entries: readonly ContentRef[], max: number, shed: ShedItem[]): ContentRef[] {
  const lastPosition = new Map(entries.map((entry, position) => [entry.artifact_id, position]));
  const unique = entries.filter((entry, position) => lastPosition.get(entry.artifact_id) === position);
  const over = Math.max(0, unique.length - max);
  const item = (value: ContentRef, reason: ShedReason): ShedItem => ({
    field: "artifact_index",
    reason,
    value,
    artifact_id: value.artifact_id,
  });
  const duplicates = entries.filter((entry, position) => lastPosition.get(entry.artifact_id) !== position);
  shed.push(...duplicates.map((entry) => item(entry, "duplicate")));
  shed.push(...unique.slice(0, over).map((entry) => item(entry, "max_entries")));
  return unique.slice(over);
}

/**
 * Validates `input` (strict schema), then fits it to the budget: older duplicates and entries over
 * `maxArtifactIndexEntries` go, then `SHED_STEPS` while over `maxHotStateTokens`, last the minimal
 * state; every removal is in `shed` and logged. BUDGET_EXCEEDED when even the minimal state is over
 * or the counter fails (`UNMEASURABLE`): an unmeasured state never fits.
 */
export function buildHotState(input: unknown, options: BuildHotStateOptions = {}): HotStateBuild {
  return runToEnd(fitHotState(input, options));
}

/** {@link buildHotState} in slices that let the event loop go on. ABORTED when `signal` fires. */
export function buildHotStateInSlices(input: unknown, options: BuildHotStateOptions, signal?: AbortSignal) {
  return runInSlices(fitHotState(input, options), { signal, what: "build the hot state" });
}

/** The work of {@link buildHotState}; every count stops once past the budget (a few short counts). */
function* fitHotState(input: unknown, options: BuildHotStateOptions): Steps<HotStateBuild> {
  const budget = resolveBudget(options.budget);
  const counter = options.countTokens ?? countTokensExact;
  assertTokenCounter(counter);
  const limit = budget.maxHotStateTokens;

  let state: HotState = parseOrThrow(HotStateSchema, input, "hot state");
  const shed: ShedItem[] = [];
  if (state.artifact_index) {
    const index = trimIndex(state.artifact_index, budget.maxArtifactIndexEntries, shed);
    state = { ...state, artifact_index: index };
    if (index.length === 0 && shed.length > 0) delete state.artifact_index;
  }
  yield;
  // Counted up to the limit: every decision is "within it or not", and the count of the state
  // kept is exact. The schema's output has its fields in schema order and shedding keeps it, so
  // equal states serialize to equal JSON whatever order the input had.
  const measure: Measure = function* (candidate, max = limit) {
    const json = JSON.stringify(candidate);
    yield;
    const what = `hot state of session ${describeValue(candidate.session_id)}`;
    return { json, tokens: yield* measureTokensUpTo(counter, json, max, what) };
  };

  let measured = yield* measure(state);
  if (measured.tokens > limit)
    ({ state, measured } = yield* shedToFit(state, measured, limit, measure, shed));
  const minimal = measured.tokens > limit;
  if (minimal) {
    state = minimalState(state, shed);
    // Counted whole (it is identifiers only): the error says how far over it is.
    measured = yield* measure(state, Number.POSITIVE_INFINITY);
    if (measured.tokens > limit) {
      const message = `hot state of session ${describeValue(state.session_id)} does not fit maxHotStateTokens of ${limit} even as the minimal state (${measured.tokens} tokens of identifiers); raise the budget or shorten the ids`;
      throw new StowageError("BUDGET_EXCEEDED", message, { details: { tokens: measured.tokens, limit } });
    }
  }

  const { json, tokens } = measured;
  if (shed.length > 0) {
    const items = shed.map(({ field, reason, artifact_id }) => ({ field, reason, artifact_id }));
    const message = `hot state of session ${describeValue(state.session_id)} was cut to fit its budget: ${shed.length} item(s) shed${minimal ? ", fell back to the minimal state" : ""}`;
    (options.logger ?? consoleLogger).warn({ tokens, maxHotStateTokens: limit, shed: items }, message);
  }
  const build = {
    state: deepFreeze(state),
    json,
    tokens,
    bytes: Buffer.byteLength(json),
    shed: deepFreeze(shed),
  };
  return Object.freeze({ ...build, truncated: shed.length > 0, minimal });
}

/** The identifiers of `state` alone; every other field is listed in `shed`. */
function minimalState(state: HotState, shed: ShedItem[]): HotState {
  const kept: HotState = { session_id: state.session_id };
  for (const field of FIELD_ORDER) {
    if (state[field] === undefined || field === "session_id") continue;
    if ((MINIMAL_HOT_STATE_FIELDS as readonly string[]).includes(field))
      Object.assign(kept, { [field]: state[field] });
    else shed.push({ field: field as ShedItem["field"], reason: "minimal_fallback", value: state[field] });
  }
  return kept;
}

/**
 * Runs the shedding steps until the state fits. Within a step, a binary search finds the fewest
 * units to remove (removing more never makes the JSON longer): a long list costs a few counts.
 */
function* shedToFit(state: HotState, measured: Measured, limit: number, measure: Measure, shed: ShedItem[]) {
  for (const step of SHED_STEPS) {
    const units = step.units(state);
    if (units === 0) continue;
    let best = step.apply(state, units);
    let bestMeasured = yield* measure(best.state);
    for (let low = 1, high = units; bestMeasured.tokens <= limit && low < high; ) {
      const middle = (low + high) >>> 1;
      const applied = step.apply(state, middle);
      const tried = yield* measure(applied.state);
      if (tried.tokens <= limit) [high, best, bestMeasured] = [middle, applied, tried];
      else low = middle + 1;
    }
    [state, measured] = [best.state, bestMeasured];
    shed.push(...best.shed);
    if (measured.tokens <= limit) break;
  }
  return { state, measured };
}
