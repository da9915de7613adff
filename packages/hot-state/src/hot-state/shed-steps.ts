import type { ContentRef, HotState } from "../schemas/schemas.js";

/** Fields a minimal hot state keeps: the session id and the other identifiers. */
export const MINIMAL_HOT_STATE_FIELDS = ["session_id", "session_key", "run_id", "current_plan_id"] as const;

/** What a shed item was: a hot-state field, or the summary of one index entry. */
export type ShedField =
  | Exclude<keyof HotState, (typeof MINIMAL_HOT_STATE_FIELDS)[number]>
  | "artifact_index.summary";

/** Why: an older `duplicate` index entry, over `max_entries` or the `tokens`, or the `minimal_fallback`. */
export type ShedReason = "duplicate" | "max_entries" | "tokens" | "minimal_fallback";

/** One item removed from the hot state to fit its budget, and why. */
export interface ShedItem {
  field: ShedField;
  reason: ShedReason;
  /** What was removed: a list item, an index entry, a summary, or a whole field's value. */
  value: unknown;
  /** The index entry it came from, for `artifact_index` and `artifact_index.summary`. */
  artifact_id?: string;
}

/** One step of the shedding order: how many units it can remove, and the state without its first `count`. */
export interface ShedStep {
  units(state: HotState): number;
  apply(state: HotState, count: number): { state: HotState; shed: ShedItem[] };
}

/** Removes the oldest items of a list (an index entry carries its id). */
const listStep = (field: "accepted_decisions" | "open_questions" | "artifact_index"): ShedStep => ({
  units: (state) => state[field]?.length ?? 0,
  apply(state, count) {
    const items: readonly unknown[] = state[field] ?? [];
    const next = { ...state, [field]: items.slice(count) };
    if (next[field]!.length === 0) delete next[field];
    const shed = items.slice(0, count).map((value): ShedItem => {
      const id = field === "artifact_index" ? { artifact_id: (value as ContentRef).artifact_id } : {};
      return { field, reason: "tokens", value, ...id };
    });
    return { state: next, shed };
  },
});

const summaryStep: ShedStep = {
  units: (state) => state.artifact_index?.filter((entry) => entry.summary !== undefined).length ?? 0,
  apply(state, count) {
    const shed: ShedItem[] = [];
    const entries = (state.artifact_index ?? []).map((entry): ContentRef => {
      if (entry.summary === undefined || shed.length === count) return entry;
      const { summary: value, ...rest } = entry;
      shed.push({ field: "artifact_index.summary", reason: "tokens", value, artifact_id: entry.artifact_id });
      return rest;
    });
    return { state: { ...state, artifact_index: entries }, shed };
  },
};

const lastStepStep: ShedStep = {
  units: (state) => (state.last_successful_step === undefined ? 0 : 1),
  apply({ last_successful_step: value, ...state }) {
    return { state, shed: [{ field: "last_successful_step", reason: "tokens", value }] };
  },
};

/**
 * What `buildHotState` sheds to fit `maxHotStateTokens`, in order, each oldest first: index summaries
 * (the record keeps them), decisions, index entries, questions, the last step; the rest stays until
 * the minimal fallback.
 */
export const SHED_STEPS: readonly ShedStep[] = [
  summaryStep,
  listStep("accepted_decisions"),
  listStep("artifact_index"),
  listStep("open_questions"),
  lastStepStep,
];
