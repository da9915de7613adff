// A plot of one measure per turn (hot-state tokens, estimated prompt tokens) against its budget
// line and warning level, drawn as inline SVG: no chart library, no CDN. Turns whose budget check
// failed carry a violation marker.

const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 560;
const HEIGHT = 180;
const MARGIN = { top: 12, right: 84, bottom: 26, left: 52 };

function svg(tag, attributes = {}, text) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  if (text !== undefined) element.textContent = text;
  return element;
}

/** Turn labels drawn at most under the x axis: one per turn is unreadable past a few dozen. */
const MAX_TURN_LABELS = 10;

/** A step of about `ticks` ticks up to `max` (1, 2 or 5 × a power of ten). */
function tickStep(max, ticks = 5) {
  const rough = max / ticks;
  const power = 10 ** Math.floor(Math.log10(rough));
  return [1, 2, 5, 10].map((m) => m * power).find((step) => step >= rough) ?? rough;
}

/**
 * An <svg class="token-plot"> of `points` (`[{ turn, value, violation }]`, `value` null when it
 * could not be measured) against `budget` (the limit) and `warning` (the warning level).
 */
export function tokenPlot({ title, series, points, budget, warning }) {
  const measured = points.filter((point) => typeof point.value === "number");
  const top = Math.max(budget, ...measured.map((point) => point.value)) * 1.1 || 1;
  // The turns shown may be the last page of a long series: the axis spans them, not 1…last.
  const turns = points.map((point) => point.turn);
  const firstTurn = turns.length > 0 ? Math.min(...turns) : 1;
  const lastTurn = Math.max(firstTurn, ...turns);
  const plotWidth = WIDTH - MARGIN.left - MARGIN.right;
  const plotHeight = HEIGHT - MARGIN.top - MARGIN.bottom;
  const x = (turn) =>
    MARGIN.left +
    (lastTurn === firstTurn ? plotWidth / 2 : ((turn - firstTurn) / (lastTurn - firstTurn)) * plotWidth);
  const y = (value) => MARGIN.top + plotHeight - (value / top) * plotHeight;

  const root = svg("svg", {
    class: "token-plot",
    "data-series": series,
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
    role: "img",
    "aria-label": `${title}: ${measured.length} turns, budget ${budget}, warning at ${warning}`,
  });
  root.append(svg("title", {}, title));

  // Axes and ticks.
  const step = tickStep(top);
  for (let value = 0; value <= top; value += step) {
    root.append(
      svg("line", {
        class: "grid",
        x1: MARGIN.left,
        x2: MARGIN.left + plotWidth,
        y1: y(value),
        y2: y(value),
      }),
      svg(
        "text",
        { class: "tick", x: MARGIN.left - 6, y: y(value) + 4, "text-anchor": "end" },
        formatNumber(value),
      ),
    );
  }
  // Turn labels: every turn while they fit, else every `turnStep`-th (1, 2 or 5 × 10^n).
  const turnStep =
    lastTurn - firstTurn + 1 <= MAX_TURN_LABELS
      ? 1
      : Math.max(1, tickStep(lastTurn - firstTurn, MAX_TURN_LABELS - 1));
  for (let turn = Math.ceil(firstTurn / turnStep) * turnStep; turn <= lastTurn; turn += turnStep) {
    if (turn < firstTurn) continue;
    root.append(
      svg(
        "text",
        { class: "tick turn-tick", x: x(turn), y: HEIGHT - 8, "text-anchor": "middle" },
        String(turn),
      ),
    );
  }

  // The limit and the warning level, labelled at the right.
  for (const [kind, value, label] of [
    ["budget-line", budget, `budget ${formatNumber(budget)}`],
    ["warning-line", warning, `warn ${formatNumber(warning)}`],
  ]) {
    root.append(
      svg("line", { class: kind, x1: MARGIN.left, x2: MARGIN.left + plotWidth, y1: y(value), y2: y(value) }),
      svg("text", { class: `${kind}-label`, x: MARGIN.left + plotWidth + 4, y: y(value) + 4 }, label),
    );
  }

  // The series: a line through the measured turns, a point per turn, a marker per violation.
  if (measured.length > 1) {
    root.append(
      svg("polyline", {
        class: "series",
        points: measured.map((point) => `${x(point.turn)},${y(point.value)}`).join(" "),
      }),
    );
  }
  for (const point of points) {
    const value = typeof point.value === "number" ? point.value : null;
    const cy = value === null ? y(top) : y(value);
    const circle = svg("circle", {
      class: value === null ? "point unmeasured" : "point",
      cx: x(point.turn),
      cy,
      r: 4,
      "data-turn": point.turn,
    });
    circle.append(
      svg("title", {}, `turn ${point.turn}: ${value === null ? "not measured" : formatNumber(value)}`),
    );
    root.append(circle);
    if (point.violation) {
      root.append(
        svg("circle", { class: "violation-marker", cx: x(point.turn), cy, r: 9, "data-turn": point.turn }),
      );
    }
  }
  return root;
}

const numbers = new Intl.NumberFormat("en-US");
function formatNumber(value) {
  return numbers.format(Math.round(value));
}
