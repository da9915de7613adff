// DOM helpers. Data only ever reaches the page as text nodes or attribute values, never as HTML.

/**
 * Creates an element. `props`: `class`, `text` (textContent), `on` ({ event: handler }), `open`,
 * `hidden`, `disabled`; anything else becomes an attribute. Children: nodes or strings (as text).
 */
export function h(tag, props = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "class") element.className = value;
    else if (name === "text") element.textContent = value;
    else if (name === "on")
      for (const [event, handler] of Object.entries(value)) element.addEventListener(event, handler);
    else if (name === "open" || name === "hidden" || name === "disabled") element[name] = true;
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  append(element, children);
  return element;
}

/** Appends nodes and strings (as text), skipping null, undefined and false, flattening arrays. */
export function append(parent, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return parent;
}

/** Replaces the children of `parent` with `children` (as `append` takes them). */
export function replace(parent, children) {
  parent.replaceChildren();
  return append(parent, children);
}

const numbers = new Intl.NumberFormat("en-US");

/** 48210 → "48,210". */
export function formatCount(value) {
  return typeof value === "number" ? numbers.format(value) : "?";
}

/** 2122553 → "2.0 MiB": 1,024-byte units, named as such (as the server's `sizeFormatted`). */
export function formatBytes(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** 94500 → "1 min 34.5 s". */
export function formatDuration(ms) {
  if (typeof ms !== "number") return "?";
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  return `${Math.floor(seconds / 60)} min ${(seconds % 60).toFixed(1)} s`;
}

/** An ISO date, or a session's `startedAt` (`2026-11-21T22-10-18-963Z`, from its file name), in local time. */
export function formatTime(value) {
  const match = /^(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})-(\d{3})Z$/.exec(value ?? "");
  const date = new Date(match ? `${match[1]}T${match[2]}:${match[3]}:${match[4]}.${match[5]}Z` : value);
  return Number.isNaN(date.getTime()) ? String(value) : date.toLocaleString();
}

/** The first `n` characters of an id, for compact labels (the full id stays in the title). */
export function shortId(id, n = 8) {
  return id.length > n + 1 ? `${id.slice(0, n)}…` : id;
}

/** UTF-8 size of a string. */
export function byteLength(text) {
  return new TextEncoder().encode(text).byteLength;
}
