// Text for a <pre> that may be megabytes long (a tool's full output). Laid out whole, 25,000 lines
// keep the page busy for seconds on every click that changes layout; split into blocks of lines
// that the browser lays out only once they scroll into view (`content-visibility: auto`), the page
// stays responsive. The blocks hold the text unchanged: the <pre>'s text is the original text.
import { h } from "./dom.js";
import { richText } from "./rich-text.js";

/** Lines per block; the stylesheet's `.text-block` height estimate assumes this many. */
export const LINES_PER_BLOCK = 100;
/** Texts shorter than this are shown as one run of text: splitting them gains nothing. */
const SPLIT_FROM_CHARS = 32 * 1024;

/**
 * `text` as `richText` shows it, in blocks of `LINES_PER_BLOCK` lines when it is long. Each block
 * but the last ends with its newline, which ends a block without adding an empty line. References
 * never span lines, so no link is cut in two.
 */
export function longRichText(text, ctx) {
  if (text.length < SPLIT_FROM_CHARS) return richText(text, ctx);
  const blocks = [];
  let start = 0;
  while (start < text.length) {
    let end = start;
    for (let line = 0; line < LINES_PER_BLOCK && end !== -1; line += 1) {
      end = text.indexOf("\n", end);
      if (end !== -1) end += 1;
    }
    if (end === -1) end = text.length;
    blocks.push(h("span", { class: "text-block" }, richText(text.slice(start, end), ctx)));
    start = end;
  }
  return blocks;
}
