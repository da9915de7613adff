// A session's hot state and prompt metrics: per-turn token plots against the budget, and the
// current hot state as a compact table whose artifact index opens the referenced content.
import { describeError, seg } from "./api.js";
import { formatCount, h, shortId } from "./dom.js";
import { tokenPlot } from "./token-plot.js";

/** Turns plotted at most: the last ones of a longer series (the summary still covers all of it). */
export const PLOT_TURNS = 500;

const SCALAR_FIELDS = ["objective", "run_id", "current_plan_id", "last_successful_step", "risk_level"];
const LIST_FIELDS = ["accepted_decisions", "open_questions", "constraints"];

function pointsOf(entries, measure, fields) {
  return entries.map((entry) => ({
    turn: entry.turn,
    value: entry.record[measure],
    violation: entry.violations.some((violation) => fields.includes(violation.field)),
  }));
}

/** "turn 4", "turns 4, 9 and 3 more": a long list of violating turns stays one line. */
function turnList(turns) {
  const shown = turns.slice(0, 10).join(", ");
  const more = turns.length > 10 ? ` and ${turns.length - 10} more` : "";
  return `${turns.length === 1 ? "turn" : "turns"} ${shown}${more}`;
}

function plots(entries, status) {
  const { budget, warning_levels: levels, summary } = status;
  const shown =
    entries.length < summary.turns
      ? ` · plotted: turns ${entries[0].turn}–${entries.at(-1).turn} (the last ${entries.length})`
      : "";
  const caption = h(
    "p",
    { class: "muted plot-caption" },
    `${summary.turns} model calls · hot state max ${formatCount(summary.hs_tokens.max)}, p95 ${formatCount(summary.hs_tokens.p95)} tokens · ` +
      `prompt max ${formatCount(summary.est_tokens.max)}, p95 ${formatCount(summary.est_tokens.p95)} tokens · ` +
      `${summary.violating_turns} over budget${summary.violation_turns.length ? ` (${turnList(summary.violation_turns)})` : ""}${shown}`,
  );
  return h(
    "div",
    { class: "plots" },
    caption,
    h(
      "figure",
      {},
      h("figcaption", { text: "Hot-state tokens per turn" }),
      tokenPlot({
        title: "Hot-state tokens per turn",
        series: "hs_tokens",
        points: pointsOf(entries, "hs_tokens", ["maxHotStateTokens", "maxArtifactIndexEntries"]),
        budget: budget.maxHotStateTokens,
        warning: levels.hot_state_tokens,
      }),
    ),
    h(
      "figure",
      {},
      h("figcaption", { text: "Estimated prompt tokens per turn" }),
      tokenPlot({
        title: "Estimated prompt tokens per turn",
        series: "est_tokens",
        points: pointsOf(entries, "est_tokens", [
          "maxPromptTokens",
          "maxRagChunks",
          "maxInlineArtifactChars",
        ]),
        budget: budget.maxPromptTokens,
        warning: levels.prompt_tokens,
      }),
    ),
  );
}

function stateTable(ctx, sessionId, hot) {
  const rows = [];
  const row = (name, value) =>
    rows.push(h("tr", {}, h("th", { scope: "row", text: name }), h("td", {}, value)));
  row(
    "version",
    `${hot.version} · ${formatCount(hot.tokens)} tokens${hot.truncated ? " · shed to fit" : ""}`,
  );
  for (const field of SCALAR_FIELDS) {
    if (hot.state[field] !== undefined && hot.state[field] !== null) row(field, String(hot.state[field]));
  }
  for (const field of LIST_FIELDS) {
    const items = hot.state[field] ?? [];
    if (items.length > 0)
      row(
        field,
        h(
          "ul",
          { class: "compact-list" },
          items.map((item) => h("li", { text: item })),
        ),
      );
  }
  const index = hot.state.artifact_index ?? [];
  const indexTable = h(
    "table",
    { class: "artifact-index" },
    h(
      "thead",
      {},
      h("tr", {}, h("th", { text: "label" }), h("th", { text: "type" }), h("th", { text: "artifact_id" })),
    ),
    h(
      "tbody",
      {},
      index.map((ref) =>
        h(
          "tr",
          {},
          h("td", { text: ref.label ?? "" }),
          h("td", { text: ref.type }),
          h(
            "td",
            {},
            h("a", {
              href: "#",
              class: "content-ref",
              title: ref.artifact_id,
              "data-artifact-id": ref.artifact_id,
              text: shortId(ref.artifact_id, 12),
              on: {
                click: (event) => {
                  event.preventDefault();
                  ctx.reader.openPath(
                    `ArtifactRef: ${ref.artifact_id}`,
                    `/sessions/${seg(sessionId)}/hot-state/content/${seg(ref.artifact_id)}`,
                  );
                },
              },
            }),
          ),
        ),
      ),
    ),
  );
  row("artifact_index", index.length > 0 ? indexTable : h("span", { class: "muted", text: "empty" }));
  return h("table", { class: "hot-state-table" }, h("tbody", {}, rows));
}

/**
 * The badge: whether any call of the whole series went over budget (not only the last one), and
 * how the last call did.
 */
function budgetBadge(status) {
  const over = status.summary.violating_turns;
  const lastCall =
    status.last_turn === null
      ? ""
      : status.last_call_ok
        ? "last call within budget"
        : "last call over budget";
  return h("span", {
    class: `badge ${over === 0 ? "badge-ok" : "badge-error"}`,
    title: lastCall,
    text: over === 0 ? "within budget" : `${over} ${over === 1 ? "call" : "calls"} over budget`,
  });
}

/** The panel of session `sessionId`; shows nothing when the session has no hot state or metrics. */
export function hotStatePanel(ctx, sessionId) {
  const element = h("section", { class: "panel hot-state", hidden: true });
  const base = `/sessions/${seg(sessionId)}`;
  Promise.all([
    // The status first: its last turn says which page of the series to plot.
    ctx.api.json(`${base}/budget`).then(async (status) => {
      const lastTurn = status.last_turn?.turn ?? 0;
      const afterTurn = Math.max(0, lastTurn - PLOT_TURNS);
      const metrics = await ctx.api.json(
        `${base}/prompt-metrics?after_turn=${afterTurn}&limit=${PLOT_TURNS}`,
      );
      return [status, metrics];
    }),
    ctx.api
      .json(`${base}/hot-state`)
      .catch((err) => (err?.code === "NOT_FOUND" ? null : Promise.reject(err))),
  ]).then(
    ([[status, metrics], hot]) => {
      if (!hot && metrics.entries.length === 0) return;
      element.hidden = false;
      element.append(h("h3", {}, "Hot state and prompt budget ", budgetBadge(status)));
      if (metrics.entries.length > 0) element.append(plots(metrics.entries, status));
      if (hot) element.append(stateTable(ctx, sessionId, hot));
    },
    (err) => {
      // A session that is not registered (created beside the API) has no hot state to show.
      if (err?.code === "NOT_FOUND") return;
      element.hidden = false;
      element.append(h("div", { class: "inline-error", text: describeError(err) }));
    },
  );
  return element;
}
