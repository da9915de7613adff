// One agent session: its outputs (artifact:// and agent://), its uploads, and its thread (the job
// thread keyed by the session id; a tab per alias).
import { describeError, seg } from "./api.js";
import { formatTime, h } from "./dom.js";
import { hotStatePanel } from "./hot-state-panel.js";
import { readerLink } from "./rich-text.js";
import { storedSessionLine } from "./stored-session.js";
import { threadView } from "./thread-view.js";
import { uploadList } from "./uploads.js";

/** The alias a session's thread is shown on first. */
export const MAIN_ALIAS = "main";

function outputsPanel(ctx, session) {
  const link = (reference, label, note) =>
    h(
      "li",
      {},
      readerLink(reference, ctx),
      label ? h("span", { class: "muted", text: ` ${label}` }) : null,
      note ? h("span", { class: "badge badge-running", text: note }) : null,
    );
  const items = [
    ...session.artifacts.map((artifact) =>
      link(`artifact://${artifact.id}`, artifact.toolType, artifact.complete ? null : "being written"),
    ),
    ...session.agentOutputs.map((id) => link(`agent://${id}`, "subagent output")),
  ];
  return h(
    "section",
    { class: "panel outputs" },
    h("h3", { text: "Outputs" }),
    items.length > 0
      ? h("ul", { class: "refs" }, items)
      : h("p", { class: "empty", text: "No tool or subagent outputs." }),
  );
}

function threadTabs(ctx, aliases, mount) {
  let current;
  const tabs = aliases.map((alias) =>
    h("button", {
      type: "button",
      role: "tab",
      class: "tab",
      text: alias,
      on: { click: () => select(alias) },
    }),
  );
  function select(alias) {
    current?.dispose();
    for (const tab of tabs) tab.setAttribute("aria-selected", String(tab.textContent === alias));
    current = threadView({ ...ctx, thread: { jobId: ctx.sessionId, alias } });
    mount.replaceChildren(current.element);
  }
  select(aliases[0]);
  return {
    element: aliases.length > 1 ? h("div", { class: "tabs", role: "tablist" }, tabs) : null,
    dispose: () => current?.dispose(),
  };
}

/** The page of session `sessionId`; `dispose` stops its live tail. */
export function sessionView(ctx, sessionId) {
  const sessionCtx = { ...ctx, sessionId, openReader: (reference) => ctx.reader.open(sessionId, reference) };
  const head = h(
    "header",
    { class: "view-head" },
    h("h2", { title: sessionId, text: `Session ${sessionId}` }),
  );
  const panels = h("div", { class: "panels" });
  const threads = h("div", { class: "threads" });
  const element = h("div", { class: "session-view" }, head, panels, threads);
  let tabs;
  let disposed = false;

  Promise.all([
    ctx.api.json(`/sessions/${seg(sessionId)}`),
    ctx.api.allPages("/threads", "threads").catch((err) => ({ error: err })),
  ]).then(
    ([session, listing]) => {
      if (disposed) return;
      head.append(
        h("p", { class: "muted", text: `started ${formatTime(session.startedAt)}` }),
        storedSessionLine(ctx.api, sessionId),
      );
      panels.append(
        outputsPanel(sessionCtx, session),
        uploadList(ctx.api, sessionId),
        hotStatePanel(ctx, sessionId),
      );
      if (listing.error)
        threads.append(h("div", { class: "inline-error", text: describeError(listing.error) }));
      const aliases = (listing.threads ?? [])
        .filter((thread) => thread.jobId === sessionId)
        .map((thread) => thread.alias)
        .sort((a, b) => (a === MAIN_ALIAS ? -1 : b === MAIN_ALIAS ? 1 : a.localeCompare(b)));
      // With no thread yet, tail the main alias: the first items appear when they are posted.
      const mount = h("div");
      tabs = threadTabs(sessionCtx, aliases.length > 0 ? aliases : [MAIN_ALIAS], mount);
      if (tabs.element) threads.append(tabs.element);
      threads.append(mount);
    },
    (err) => {
      if (!disposed) head.append(h("div", { class: "inline-error", text: describeError(err) }));
    },
  );

  return {
    element,
    dispose() {
      disposed = true;
      tabs?.dispose();
    },
  };
}

/** A thread that belongs to no session: its items, without artifact links (they need a session). */
export function lonelyThreadView(ctx, jobId, alias) {
  const view = threadView({ ...ctx, sessionId: null, openReader: () => {}, thread: { jobId, alias } });
  const element = h(
    "div",
    { class: "session-view" },
    h("header", { class: "view-head" }, h("h2", { text: `Thread ${jobId} / ${alias}` })),
    h("p", {
      class: "muted",
      text: "This job's id is not an agent session, so its artifact:// and agent:// references cannot be opened here.",
    }),
    view.element,
  );
  return { element, dispose: view.dispose };
}
