// The files an agent uploaded for its session, each with a download link. The link is a signed URL
// asked for on click (it expires), so listing costs one request however many files there are.
import { describeError, seg } from "./api.js";
import { formatTime, h } from "./dom.js";

// A signed URL is reused until shortly before it expires.
const EXPIRY_MARGIN_MS = 30_000;

function downloadLink(api, sessionId, filename) {
  const error = h("span", { class: "inline-error", hidden: true });
  let grant;
  const link = h("a", {
    class: "download",
    href: "#",
    target: "_blank",
    rel: "noopener noreferrer",
    "data-filename": filename,
    text: "Download",
  });
  link.addEventListener("click", async (event) => {
    if (grant && grant.expiresAt > Date.now()) return; // the href is the signed URL already
    event.preventDefault();
    error.hidden = true;
    try {
      const { url, expiresIn } = await api.json(
        `/agents/${seg(sessionId)}/artifacts/${seg(filename)}/download`,
      );
      grant = { expiresAt: Date.now() + expiresIn * 1000 - EXPIRY_MARGIN_MS };
      link.href = url;
      window.open(url, "_blank", "noopener,noreferrer");
    } catch (err) {
      error.textContent = describeError(err);
      error.hidden = false;
    }
  });
  return [link, " ", error];
}

/** The upload list of a session, loaded into a section. */
export function uploadList(api, sessionId) {
  const body = h("div", { class: "uploads-body" }, h("p", { class: "empty", text: "Loading…" }));
  const section = h("section", { class: "panel uploads" }, h("h3", { text: "Uploads" }), body);
  // The upload API keeps the design document's wire words: `/artifacts` and `{ artifacts }`.
  api.json(`/agents/${seg(sessionId)}/artifacts`).then(
    ({ artifacts: uploads }) => {
      if (uploads.length === 0) {
        body.replaceChildren(h("p", { class: "empty", text: "No files uploaded for this session." }));
        return;
      }
      body.replaceChildren(
        h(
          "table",
          {},
          h("thead", {}, h("tr", {}, h("th", { text: "File" }), h("th", { text: "Size" }), h("th"))),
          h(
            "tbody",
            {},
            uploads.map((file) =>
              h(
                "tr",
                {},
                h(
                  "td",
                  { class: "filename" },
                  h("span", { class: "name", title: file.filename, text: file.filename }),
                  file.lastModified
                    ? h("span", { class: "uploaded", text: `uploaded ${formatTime(file.lastModified)}` })
                    : null,
                ),
                h("td", { class: "size", text: file.sizeFormatted }),
                h("td", { class: "actions" }, downloadLink(api, sessionId, file.filename)),
              ),
            ),
          ),
        ),
      );
    },
    (err) => body.replaceChildren(h("div", { class: "inline-error", text: describeError(err) })),
  );
  return section;
}
