// One thread entry as the page shows it: a message, a collapsed thought, a status line, a turn
// summary, or a tool call folded with its result.
import { formatCount, formatDuration, h } from "./dom.js";
import { briefOf, fullItem, truncationNote } from "./item-parts.js";
import { blobImages, richText } from "./rich-text.js";
import { toolCard } from "./tool-card.js";

const typeOf = (item) => item?.metadata?.type;

function message(item, ctx, who) {
  const brief = briefOf(item);
  return [
    h("div", { class: "who", text: who }),
    h("div", { class: "body" }, richText(brief, ctx)),
    blobImages(brief, ctx),
  ];
}

function thinking(item, ctx) {
  const text = typeof item.metadata.text === "string" ? item.metadata.text : briefOf(item);
  const length = item.metadata.full_text_length;
  return h(
    "details",
    { class: "thinking" },
    h("summary", {
      text: `Thinking${typeof length === "number" ? ` · ${formatCount(length)} characters` : ""}`,
    }),
    h("div", { class: "thinking-text" }, richText(text, ctx)),
  );
}

function turnEnd(item) {
  const stats = item.metadata.stats ?? {};
  const cached = stats.input_tokens_cached ? ` (${formatCount(stats.input_tokens_cached)} cached)` : "";
  return h("div", {
    class: "turn-end-line",
    text: `${briefOf(item)} · ${formatCount(stats.input_tokens)} input tokens${cached} · ${formatCount(stats.output_tokens)} output · ${formatDuration(stats.duration_ms)}`,
  });
}

function itemBody(item, ctx) {
  switch (typeOf(item)) {
    case undefined:
      return message(item, ctx, "user");
    case "text":
      return message(item, ctx, "agent");
    case "thinking":
      return thinking(item, ctx);
    case "status":
      return h("div", { class: "status-line", title: item.metadata.status }, richText(briefOf(item), ctx));
    case "turn_end":
      return turnEnd(item);
    case "pending_prompt":
      return message(item, ctx, "prompt");
    case "pending_prompt_resolved":
      return message(item, ctx, `prompt ${item.metadata.outcome ?? "resolved"}`);
    default:
      return message(item, ctx, String(typeOf(item)));
  }
}

/** A non-tool item; a truncated one can load its full payload in place. */
export function itemEntry(item, ctx) {
  const type = typeOf(item) ?? "post";
  const element = h(
    "article",
    { class: `entry entry-${type.replace(/[^a-z0-9]+/gi, "-")}`, "data-item-id": item.id },
    itemBody(item, ctx),
  );
  if (item.metadata?.truncated === true && item.id) {
    element.append(
      truncationNote([item], "item", async () => {
        const full = itemEntry(await fullItem(ctx, item), ctx);
        full.querySelector("details")?.setAttribute("open", "");
        element.replaceWith(full);
      }),
    );
  }
  return element;
}

/** A folded entry from the server (`{ kind: "item" }` or `{ kind: "tool" }`) as a component. */
export function entryComponent(entry, ctx) {
  if (entry.kind === "tool") return toolCard(entry, ctx);
  return { element: itemEntry(entry.item, ctx) };
}
