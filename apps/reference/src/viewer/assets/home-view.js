// The viewer's first page, when no session is chosen: the newest agent sessions, every stored
// session with its sizes and expiry, what expires soon and what was deleted lately, so the page
// shows what there is instead of a blank space.
import { describeError } from "./api.js";
import { formatBytes, formatTime, h, replace, shortId } from "./dom.js";
import {
  DELETED_SINCE_DAYS,
  deletedPanel,
  EXPIRING_WITHIN,
  expiringPanel,
  trashPanel,
} from "./life-panels.js";
import { sessionHash, storedHash } from "./sidebar.js";

/** Agent sessions the first page lists (the sidebar lists them all). */
const RECENT_SESSIONS = 10;

function recentPanel(sessions) {
  const newest = sessions.slice(0, RECENT_SESSIONS);
  return h(
    "section",
    { class: "panel recent-sessions" },
    h("h3", { text: "Recent agent sessions" }),
    newest.length === 0
      ? h("p", { class: "empty", text: "None yet: `stowage demo` plays one." })
      : h(
          "ul",
          { class: "refs" },
          newest.map((session) =>
            h(
              "li",
              {},
              h("a", {
                href: sessionHash(session.sessionId),
                title: session.sessionId,
                text: shortId(session.sessionId, 13),
              }),
              h("span", { class: "muted", text: ` started ${formatTime(session.startedAt)}` }),
            ),
          ),
        ),
  );
}

function storedPanel(stored) {
  const row = (session) =>
    h(
      "tr",
      { "data-session-id": session.sessionId },
      h(
        "td",
        { class: "cell" },
        h("a", {
          href: storedHash(session.sessionId),
          title: session.sessionId,
          text: shortId(session.sessionId, 13),
        }),
      ),
      h("td", { class: "cell" }, h("span", { class: "badge agent-type", text: session.agentType })),
      h("td", {
        class: "cell size",
        text: `${formatBytes(session.rawSizeBytes)}, ${formatBytes(session.storedBytes)} stored`,
      }),
      h("td", {
        class: "cell expires",
        text: session.expiresAt ? `until ${formatTime(session.expiresAt)}` : "kept",
      }),
    );
  return h(
    "section",
    { class: "panel stored-overview" },
    h("h3", { text: "Stored sessions" }),
    stored.length === 0
      ? h("p", { class: "empty", text: "None yet: `stowage session capture` stores one." })
      : h("table", {}, h("tbody", {}, stored.map(row))),
  );
}

/** The first page; it reads the two listings the sidebar reads. */
export function homeView(api) {
  const body = h("div", { class: "panels home-panels" }, h("p", { class: "empty", text: "Loading…" }));
  const element = h(
    "div",
    { class: "home" },
    h("h2", { text: "Choose a session" }),
    h("p", {
      class: "muted",
      text: "An agent session shows its thread (briefs, tool calls with their output, thinking), its outputs and its uploads; a stored session, its transcripts as threads and its files.",
    }),
    body,
  );
  let disposed = false;
  const since = new Date(Date.now() - DELETED_SINCE_DAYS * 86_400_000).toISOString();
  Promise.all([
    api.json("/sessions"),
    api.allPages("/session-blobs", "sessions"),
    api.json(`/expiring?within=${EXPIRING_WITHIN}`),
    api.json("/trash"),
    api.allPages(`/audit?since=${encodeURIComponent(since)}`, "rows"),
  ]).then(
    ([{ sessions }, stored, { expiring }, trash, deleted]) => {
      if (disposed) return;
      replace(body, [
        recentPanel(sessions),
        storedPanel(stored.sessions),
        expiringPanel(expiring),
        trashPanel(api, trash),
        deletedPanel(deleted.rows),
      ]);
    },
    (err) => {
      if (!disposed) body.replaceChildren(h("div", { class: "inline-error", text: describeError(err) }));
    },
  );
  return {
    element,
    dispose() {
      disposed = true;
    },
  };
}
