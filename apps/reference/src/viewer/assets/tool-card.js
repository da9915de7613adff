// A tool call folded with its result: the briefs and any images stay visible; input and output sit
// in a closed <details>, and a truncated side loads its full payload from the thread log.
import { append, byteLength, formatBytes, h, replace } from "./dom.js";
import { briefOf, fullItem, truncationNote } from "./item-parts.js";
import { longRichText } from "./long-text.js";
import { blobImages, richText } from "./rich-text.js";

const tool = (item) => item?.metadata?.tool ?? {};
const isTruncated = (item) => item?.metadata?.truncated === true && typeof item.id === "string";

function statusOf(result) {
  if (!result) return "running";
  return tool(result).is_error === true ? "error" : "ok";
}

function inputText(call) {
  const { input } = tool(call);
  return typeof input === "string" ? input : (JSON.stringify(input, null, 2) ?? "");
}

function outputText(result) {
  const { output } = tool(result);
  return typeof output === "string" ? output : briefOf(result);
}

/** The call's brief without the tool name it starts with (`Bash → npm test` → `npm test`). */
function callSummary(name, call) {
  const brief = briefOf(call);
  const prefix = `${name} → `;
  return name && brief.startsWith(prefix) ? brief.slice(prefix.length) : brief;
}

/** A folded pair as a component; `setResult` fills in a result that arrives live. */
export function toolCard(entry, ctx) {
  const state = { ...entry, open: false, loaded: false };
  const element = h("article", { class: "entry tool", "data-invocation-id": entry.invocationId });

  async function loadFull() {
    const [call, result] = await Promise.all(
      [state.call, state.result].map((item) => (isTruncated(item) ? fullItem(ctx, item) : item)),
    );
    Object.assign(state, { call, result, open: true, loaded: true });
    render();
  }

  /** What the folded part shows once opened: the truncation note, the input and the output. */
  function ioBody(output) {
    const truncated = [state.call, state.result].filter(isTruncated);
    return [
      truncated.length > 0
        ? truncationNote(truncated, truncated.includes(state.result) ? "output" : "input", loadFull)
        : null,
      state.loaded
        ? h("div", {
            class: "loaded-note",
            text: `Full payload from ${ctx.fullItemSource ?? "the thread log"}.`,
          })
        : null,
      state.call
        ? [
            h("h4", { text: "Input" }),
            h("pre", { class: "tool-input" }, longRichText(inputText(state.call), ctx)),
          ]
        : null,
      output === undefined
        ? null
        : [
            h("h4", { text: "Output" }),
            h("pre", { class: `tool-output ${statusOf(state.result)}` }, longRichText(output, ctx)),
          ],
    ];
  }

  // The input and output are in the page only while they are open: a folded card with a 2 MB
  // output would otherwise keep 25,000 lines in the DOM, for every search and style pass to walk.
  function io() {
    const output = state.result ? outputText(state.result) : undefined;
    const summary = h("summary", {
      text: output === undefined ? "Input" : `Input and output (${formatBytes(byteLength(output))})`,
    });
    const details = h("details", { class: "tool-io", open: state.open }, summary);
    if (state.open) append(details, ioBody(output));
    details.addEventListener("toggle", () => {
      if (details.open === state.open) return;
      state.open = details.open;
      if (details.open) append(details, ioBody(output));
      else replace(details, [summary]);
    });
    return details;
  }

  function render() {
    const status = statusOf(state.result);
    element.className = `entry tool tool-${status}`;
    replace(element, [
      h(
        "header",
        { class: "tool-head" },
        h("span", { class: "tool-name", text: state.name ?? "tool" }),
        h(
          "span",
          { class: "tool-summary" },
          state.call ? richText(callSummary(state.name, state.call), ctx) : "(call not seen)",
        ),
        h("span", { class: `badge badge-${status}`, text: status }),
      ),
      state.result ? h("div", { class: "tool-result-brief" }, richText(briefOf(state.result), ctx)) : null,
      state.result ? blobImages(outputText(state.result), ctx) : null,
      io(),
    ]);
  }

  render();
  return {
    element,
    setResult(result) {
      state.result = result;
      render();
    },
  };
}
