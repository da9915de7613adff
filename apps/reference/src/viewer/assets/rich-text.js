// Text with its references made visible: artifact:// and agent:// become links that open the
// reader, blob:sha256:<hex> becomes an image, truncation markers stand out. Everything is text nodes.
import { describeError, seg } from "./api.js";
import { h } from "./dom.js";

const REFERENCE =
  /artifact:\/\/\d+|agent:\/\/\d+-[\w-]+(?:\.\d+-[\w-]+)*(?:\/[^\s/?#]+)*(?:\?q=\S+)?|blob:sha256:[0-9a-f]{64}|…\[truncated \d+ bytes; see [^\]\n]*\]…/g;

// Sentence punctuation after a link belongs to the sentence (`see agent://0-Explore.`).
const TRAILING = /[.,;:!?)'"]+$/;

/** The SHA-256 hashes of the `blob:sha256:` references in `text`, each once, in order. */
export function blobHashes(text) {
  return [...new Set(Array.from(text.matchAll(/blob:sha256:([0-9a-f]{64})/g), (match) => match[1]))];
}

/** A link that opens an artifact:// or agent:// reference in the reader. */
export function readerLink(reference, ctx) {
  return h("a", {
    class: "ref",
    href: "#",
    "data-ref": reference,
    text: reference,
    on: {
      click: (event) => {
        event.preventDefault();
        ctx.openReader(reference);
      },
    },
  });
}

function referenceNode(reference, ctx) {
  if (reference.startsWith("…[truncated")) return h("mark", { class: "truncation", text: reference });
  if (reference.startsWith("blob:")) {
    return h("code", { class: "blob-ref", title: reference, text: `image ${reference.slice(12, 24)}…` });
  }
  if (!ctx.sessionId) return h("code", { class: "ref", title: "open a session to read it", text: reference });
  return readerLink(reference, ctx);
}

/** `text` as a fragment of text nodes, reference links and markers. */
export function richText(text, ctx) {
  const fragment = document.createDocumentFragment();
  let last = 0;
  for (const match of text.matchAll(REFERENCE)) {
    const reference = match[0].startsWith("agent://") ? match[0].replace(TRAILING, "") : match[0];
    if (match.index > last) fragment.append(text.slice(last, match.index));
    fragment.append(referenceNode(reference, ctx));
    last = match.index + reference.length;
  }
  if (last < text.length) fragment.append(text.slice(last));
  return fragment;
}

/** The images for the blob references in `text`: fetched with the key, shown as object URLs. */
export function blobImages(text, ctx) {
  const hashes = blobHashes(text);
  if (hashes.length === 0) return null;
  return h(
    "div",
    { class: "images" },
    hashes.map((hash) => {
      const img = h("img", { class: "blob-image", alt: `image sha256:${hash}`, "data-hash": hash });
      const figure = h("figure", {}, img, h("figcaption", { text: `sha256:${hash.slice(0, 12)}…` }));
      img.addEventListener("click", () => figure.classList.toggle("zoomed"));
      // A stored session's reader serves the images its transcripts held inline (`ctx.imageUrl`).
      (ctx.imageUrl ? ctx.imageUrl(hash) : ctx.api.blobImage(hash)).then(
        (url) => {
          img.src = url;
        },
        (err) => figure.replaceChildren(h("div", { class: "inline-error", text: describeError(err) })),
      );
      return figure;
    }),
  );
}

/** The API path that reads an `artifact://` or `agent://` reference of a session. */
export function referencePath(sessionId, reference) {
  const base = `/sessions/${seg(sessionId)}`;
  if (reference.startsWith("artifact://"))
    return { path: `${base}/artifact/${reference.slice(11)}`, pages: true };
  const rest = reference.slice("agent://".length);
  const queryAt = rest.indexOf("?q=");
  const pathPart = queryAt === -1 ? rest : rest.slice(0, queryAt);
  // Path segments are sent as written in the reference: the server decodes and checks them.
  const path = `${base}/agent/${pathPart.split("/").map(encodeSegment).join("/")}`;
  if (queryAt !== -1) {
    return { path: `${path}?q=${encodeURIComponent(safeDecode(rest.slice(queryAt + 3)))}`, pages: false };
  }
  // Reads with a JSON path cannot be paged; plain reads of an output can.
  return { path, pages: !pathPart.includes("/") };
}

// Keeps existing percent-escapes (the reference is already URL text) and encodes the rest; a
// segment of dots is escaped so that the browser does not resolve it as `..` in the request path.
function encodeSegment(segment) {
  if (/^\.+$/.test(segment)) return segment.replaceAll(".", "%2E");
  return segment.replace(/[^\w\-.~%]/g, (char) => encodeURIComponent(char));
}

function safeDecode(text) {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
