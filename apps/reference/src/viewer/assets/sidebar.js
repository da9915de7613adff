// The list of agent sessions (newest first), then the threads of jobs that are not sessions, then
// the sessions stored for follow-up runs, each with the agent it is of.
import { describeError } from "./api.js";
import { formatBytes, formatTime, h, replace, shortId } from "./dom.js";

/** Fragment that opens a session or a thread (the key never goes in it). */
export const sessionHash = (sessionId) => `#session=${encodeURIComponent(sessionId)}`;
export const threadHash = (jobId, alias) => `#thread=${encodeURIComponent(`${jobId}/${alias}`)}`;
export const storedHash = (sessionId) => `#stored=${encodeURIComponent(sessionId)}`;

/** Fills `nav` with the lists; `markActive(hash)` highlights the open one. */
export function renderSidebar(nav, api) {
  const body = h("div", {}, h("p", { class: "empty", text: "Loading…" }));
  const refresh = h("button", { type: "button", class: "quiet", text: "Refresh", on: { click: load } });
  nav.replaceChildren(h("div", { class: "sidebar-head" }, h("h2", { text: "Sessions" }), refresh), body);

  async function load() {
    try {
      const [{ sessions }, { threads }, stored] = await Promise.all([
        api.json("/sessions"),
        api.allPages("/threads", "threads"),
        api.allPages("/session-blobs", "sessions"),
      ]);
      const sessionIds = new Set(sessions.map((session) => session.sessionId));
      const others = threads.filter((thread) => !sessionIds.has(thread.jobId));
      replace(body, [
        sessions.length === 0
          ? h("p", { class: "empty", text: "No agent sessions yet. Run `stowage demo` to make one." })
          : h(
              "ul",
              { class: "nav-list" },
              sessions.map((session) =>
                h(
                  "li",
                  {},
                  h(
                    "a",
                    { href: sessionHash(session.sessionId), title: session.sessionId },
                    h("span", { class: "nav-id", text: shortId(session.sessionId) }),
                    h("span", { class: "nav-meta", text: formatTime(session.startedAt) }),
                  ),
                ),
              ),
            ),
        others.length === 0
          ? null
          : [
              h("h2", { class: "sidebar-sub", text: "Other threads" }),
              h(
                "ul",
                { class: "nav-list" },
                others.map((thread) =>
                  h(
                    "li",
                    {},
                    h(
                      "a",
                      {
                        href: threadHash(thread.jobId, thread.alias),
                        title: `${thread.jobId}/${thread.alias}`,
                      },
                      h("span", { class: "nav-id", text: `${thread.jobId} / ${thread.alias}` }),
                      h("span", { class: "nav-meta", text: thread.status }),
                    ),
                  ),
                ),
              ),
            ],
        storedSessions(stored.sessions),
      ]);
      markActive(location.hash);
    } catch (err) {
      body.replaceChildren(h("div", { class: "inline-error", text: describeError(err) }));
    }
  }

  /** Every stored session with its agent's badge, each a link to its transcripts and files. */
  function storedSessions(stored) {
    if (stored.length === 0) return null;
    return [
      h("h2", { class: "sidebar-sub", text: "Stored sessions" }),
      h(
        "ul",
        { class: "nav-list stored-sessions" },
        stored.map((session) => {
          const label = [
            h("span", { class: "badge agent-type", text: session.agentType }),
            h("span", { class: "nav-id", text: shortId(session.sessionId) }),
            h("span", {
              class: "nav-meta",
              text: `${session.requestId} · ${formatBytes(session.storedBytes)} stored · ${formatTime(session.createdAt)}`,
            }),
          ];
          const title = `${session.sessionId} (${session.agentType}), stored for request ${session.requestId}`;
          return h(
            "li",
            { "data-session-id": session.sessionId },
            h("a", { href: storedHash(session.sessionId), title }, ...label),
          );
        }),
      ),
    ];
  }

  function markActive(hash) {
    for (const link of nav.querySelectorAll("a[href^='#']")) {
      link.classList.toggle("active", link.getAttribute("href") === hash);
    }
  }

  load();
  return { markActive, refresh: load };
}
