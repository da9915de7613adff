// The reader: an artifact:// or agent:// output in a dialog, a page of lines at a time.
import { describeError } from "./api.js";
import { h } from "./dom.js";
import { referencePath } from "./rich-text.js";

/** Lines per page of a paged read. */
export const PAGE_LINES = 200;

// A page read tells the line count only when it reaches the end; asking for a line past any real
// end makes the server answer OFFSET_PAST_END with the count, which "Last" then pages to.
const BEYOND_ANY_END = 999_999_999_999_999;

/** Opens references of a session in the page's <dialog id="reader">, read with `getApi()`. */
export function createReader(getApi) {
  const dialog = document.getElementById("reader");
  const title = document.getElementById("reader-title");
  const pager = document.getElementById("reader-pager");
  const problem = document.getElementById("reader-error");
  const text = document.getElementById("reader-text");
  document.getElementById("reader-close").addEventListener("click", () => dialog.close());
  // A click on the backdrop (outside the dialog's box) closes it too.
  dialog.addEventListener("click", (event) => {
    if (event.target === dialog) dialog.close();
  });
  let current;

  function button(label, offset, enabled) {
    return h("button", {
      type: "button",
      class: "quiet",
      text: label,
      disabled: !enabled,
      on: { click: () => load(offset) },
    });
  }

  function showPager(read) {
    const lines = read.lines;
    if (!current.pages || !lines) {
      pager.replaceChildren(
        h("span", { class: "range", text: read.complete === false ? "still being written" : "" }),
      );
      return;
    }
    // The count of a complete output stays true; one still being written grows.
    if (typeof lines.totalLines === "number" && read.complete !== false)
      current.totalLines = lines.totalLines;
    const total = current.totalLines;
    const previous = Math.max(1, lines.first - PAGE_LINES);
    const range = `lines ${lines.first}–${lines.last}${total === undefined ? "" : ` of ${total}`}${read.complete === false ? " (still being written)" : ""}`;
    pager.replaceChildren(
      button("« First", 1, lines.first > 1),
      button("‹ Previous", previous, lines.first > 1),
      h("span", { class: "range", text: range }),
      button("Next ›", lines.last + 1, lines.hasMore === true),
      h("button", {
        type: "button",
        class: "quiet",
        text: "Last »",
        disabled: lines.hasMore !== true,
        on: { click: loadLast },
      }),
    );
  }

  /** The output's line count, asked for once (a complete output's count stays true). */
  async function countLines(request) {
    if (request.totalLines !== undefined) return request.totalLines;
    try {
      await getApi().json(pageUrl(request, BEYOND_ANY_END, 1));
    } catch (err) {
      if (err?.reason !== "OFFSET_PAST_END" || typeof err.details?.totalLines !== "number") throw err;
      if (request.complete) request.totalLines = err.details.totalLines;
      return err.details.totalLines;
    }
    return undefined;
  }

  async function loadLast() {
    const request = current;
    let total;
    try {
      total = await countLines(request);
    } catch (err) {
      return showError(request, err);
    }
    if (current === request && total !== undefined) {
      await load(Math.max(1, total - PAGE_LINES + 1), { toEnd: true });
    }
  }

  /** "lines 1–200" says of how many: a complete output's count, asked for once it has more pages. */
  function showTotal(request, read) {
    if (!request.pages || request.totalLines !== undefined || read.complete === false) return;
    if (read.lines?.hasMore !== true) return;
    countLines(request).then(
      () => {
        if (current === request && request.shown === read && request.totalLines !== undefined)
          showPager(read);
      },
      () => {}, // the count is a nicety: the page is shown without it
    );
  }

  function pageUrl(request, offset, limit) {
    if (!request.pages) return request.path;
    return `${request.path}${request.path.includes("?") ? "&" : "?"}offset=${offset}&limit=${limit}`;
  }

  function showError(request, err) {
    if (current !== request) return;
    problem.textContent = describeError(err);
    problem.hidden = false;
  }

  async function load(offset, { toEnd = false } = {}) {
    const request = current;
    dialog.setAttribute("aria-busy", "true");
    try {
      const read = await getApi().json(pageUrl(request, offset, PAGE_LINES));
      if (current !== request) return;
      problem.hidden = true;
      text.textContent = read.text === "" ? "(empty)" : read.text;
      text.scrollTop = toEnd ? text.scrollHeight : 0;
      request.complete = read.complete !== false;
      request.shown = read;
      showPager(read);
      showTotal(request, read);
    } catch (err) {
      showError(request, err);
    } finally {
      if (current === request) dialog.removeAttribute("aria-busy");
    }
  }

  function show(request, heading) {
    current = request;
    title.textContent = heading;
    text.textContent = "";
    pager.replaceChildren();
    problem.hidden = true;
    if (!dialog.open) dialog.showModal();
    return load(1);
  }

  return {
    /** Shows `reference` (`artifact://0`, `agent://0-Explore?q=.a`) of session `sessionId`. */
    open(sessionId, reference) {
      return show({ reference, ...referencePath(sessionId, reference) }, reference);
    },
    /** Shows the `text` that `path` answers (one page, e.g. a content ref of the hot state). */
    openPath(heading, path) {
      return show({ reference: heading, path, pages: false }, heading);
    },
  };
}
