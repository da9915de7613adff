// Parts every entry kind uses: the brief, and loading what truncation left out.
import { describeError, seg } from "./api.js";
import { formatBytes, h } from "./dom.js";

/** The item's brief: `content[0].text`. */
export const briefOf = (item) => item?.content?.[0]?.text ?? "";

/** Sum of the bytes that truncation markers in the item say were cut. */
export function cutBytes(item) {
  let total = 0;
  for (const match of JSON.stringify(item).matchAll(/…\[truncated (\d+) bytes; see /g))
    total += Number(match[1]);
  return total;
}

/** The full item from the thread log, or from where `ctx.fullItem` reads it (what truncation left out). */
export async function fullItem(ctx, item) {
  if (ctx.fullItem) return ctx.fullItem(item);
  const { jobId, alias } = ctx.thread;
  const path = `/threads/${seg(jobId)}/${seg(alias)}/items/${seg(item.id)}/full`;
  return (await ctx.api.json(path)).item;
}

/** "Load full …" for a truncated item: a note with the cut size and a button running `load`. */
export function truncationNote(items, what, load) {
  const cut = items.reduce((sum, item) => sum + cutBytes(item), 0);
  const log = items.find((item) => item.metadata?.local_log)?.metadata.local_log;
  const error = h("span", { class: "inline-error", hidden: true });
  const button = h("button", { type: "button", class: "load-full", text: `Load full ${what}` });
  button.addEventListener("click", async () => {
    button.disabled = true;
    button.textContent = "Loading…";
    error.hidden = true;
    try {
      await load();
    } catch (err) {
      error.textContent = describeError(err);
      error.hidden = false;
      button.disabled = false;
      button.textContent = `Load full ${what}`;
    }
  });
  return h(
    "div",
    { class: "truncated-note" },
    h("span", {
      text: `Truncated for the thread: ${formatBytes(cut)} cut${log ? `; the full payload is in ${log}` : ""}.`,
    }),
    " ",
    button,
    " ",
    error,
  );
}
