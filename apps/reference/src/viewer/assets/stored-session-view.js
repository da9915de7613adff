// A stored session (captured for a follow-up run) read as it was captured: its record, its files
// (each a download of the original bytes), and each transcript as a thread through the server's
// thread-items adapters, a page at a time. A subagent's transcript is a tab of its own, opened from
// the tool call that started it.
import { ApiError, describeError, seg } from "./api.js";
import { formatBytes, formatCount, formatDuration, formatTime, h, replace } from "./dom.js";
import { entryComponent } from "./entries.js";

/** Entries asked for per page (the server also stops a page at about 1 MiB). */
const STORED_PAGE_ENTRIES = 100;

const fileName = (path) => path.slice(path.lastIndexOf("/") + 1);

function recordLine(outline) {
  return h(
    "p",
    { class: "muted stored-record" },
    h("span", { class: "badge agent-type", text: outline.agentType }),
    ` stored for request ${outline.requestId} on ${formatTime(outline.createdAt)}: `,
    `${formatBytes(outline.rawSizeBytes)}, ${formatBytes(outline.storedBytes)} stored (${outline.codec})`,
    outline.expiresAt ? `, kept until ${formatTime(outline.expiresAt)}` : ", kept until deleted",
  );
}

/**
 * The request's last capture and last restore (GET /requests/<id>/session-blobs/activity): when,
 * by which agent and version, how many files and bytes; nothing when none is recorded (a capture
 * stored before the app recorded them).
 */
function activityLine(ctx, requestId) {
  const line = h("p", { class: "muted stored-activity", hidden: true });
  ctx.api.json(`/requests/${seg(requestId)}/session-blobs/activity`).then(
    ({ lastCapture, lastRestore }) => {
      const agent = (entry) => (entry.agentVersion ? `${entry.agent} ${entry.agentVersion}` : entry.agent);
      replace(line, [
        lastCapture
          ? h("span", {
              class: "last-capture",
              text:
                `Captured ${formatTime(lastCapture.at)} by ${agent(lastCapture)}: ${formatCount(lastCapture.fileCount)} files, ` +
                `${formatBytes(lastCapture.rawBytes)} (${formatBytes(lastCapture.storedBytes)} stored) in ${formatDuration(lastCapture.durationMs)}`,
            })
          : "",
        lastCapture ? " · " : "",
        h("span", {
          class: "last-restore",
          text: lastRestore
            ? `last restored ${formatTime(lastRestore.at)} (${formatCount(lastRestore.fileCount)} files in ${formatDuration(lastRestore.durationMs)})`
            : "not restored yet",
        }),
      ]);
      line.hidden = false;
    },
    (err) => {
      if (err instanceof ApiError && err.status === 404) return;
      replace(line, [h("span", { class: "inline-error", text: `activity: ${describeError(err)}` })]);
      line.hidden = false;
    },
  );
  return line;
}

function filesPanel(ctx, base, outline) {
  const row = (file) => {
    const error = h("span", { class: "inline-error", hidden: true });
    const button = h("button", { type: "button", class: "quiet download", text: "Download" });
    button.addEventListener("click", async () => {
      error.hidden = true;
      try {
        await ctx.api.download(`${base}/files?path=${encodeURIComponent(file.path)}`, fileName(file.path));
      } catch (err) {
        error.textContent = describeError(err);
        error.hidden = false;
      }
    });
    return h(
      "li",
      { "data-path": file.path },
      h("code", { class: "file-path", title: file.path, text: file.path }),
      h("span", { class: "muted", text: ` ${formatBytes(file.size)} ` }),
      button,
      " ",
      error,
    );
  };
  return h(
    "section",
    { class: "panel stored-files" },
    h("h3", { text: `Files (${outline.files.length})` }),
    h("ul", { class: "refs" }, outline.files.map(row)),
  );
}

/** One transcript as a thread: pages appended on demand, a note for lines the adapter skipped. */
function transcriptView(ctx, base, transcript, openSubagent) {
  const query = (extra) => new URLSearchParams({ path: transcript.path, ...extra });
  const list = h("div", { class: "entries" });
  const status = h("p", { class: "muted transcript-status", text: "Loading…" });
  const problems = h("div", { class: "inline-error", hidden: true });
  const more = h("button", { type: "button", class: "load-more", text: "Show more", hidden: true });
  const element = h(
    "section",
    { class: "thread stored-transcript", "data-path": transcript.path },
    problems,
    list,
    status,
    more,
  );
  const controller = new AbortController();
  const entryCtx = {
    ...ctx,
    sessionId: null,
    openReader: () => {},
    imageUrl: (hash) =>
      ctx.api.image(`${base}/transcript/images/${seg(hash)}?${query()}`, `image ${hash.slice(0, 12)}…`),
    fullItemSource: "the stored transcript",
    fullItem: async (item) => (await ctx.api.json(`${base}/transcript/item?${query({ id: item.id })}`)).item,
  };
  let cursor;
  let shown = 0;

  function subagentLink(entry) {
    const agentId = entry.result?.metadata?.tool?.subagent?.agent_id;
    if (entry.kind !== "tool" || typeof agentId !== "string" || !openSubagent.has(agentId)) return null;
    return h("button", {
      type: "button",
      class: "quiet open-subagent",
      text: `Open the subagent's transcript (${agentId})`,
      on: { click: () => openSubagent.get(agentId)() },
    });
  }

  async function loadPage() {
    more.disabled = true;
    try {
      const page = await ctx.api.json(
        `${base}/transcript?${query({ limit: String(STORED_PAGE_ENTRIES), ...(cursor ? { cursor } : {}) })}`,
        { signal: controller.signal },
      );
      for (const entry of page.entries) {
        const component = entryComponent(entry, entryCtx);
        const link = subagentLink(entry);
        if (link) component.element.append(link);
        list.append(component.element);
      }
      shown += page.entries.length;
      cursor = page.cursor;
      status.textContent =
        page.total === 0
          ? "This transcript holds no turns."
          : `${formatCount(shown)} of ${formatCount(page.total)} entries`;
      more.hidden = cursor === undefined;
      if (page.problemCount > 0) {
        problems.textContent = `${formatCount(page.problemCount)} lines could not be read and are left out (first: line ${page.problems[0].line}, ${page.problems[0].message}).`;
        problems.hidden = false;
      }
    } catch (err) {
      if (controller.signal.aborted) return;
      status.textContent = "";
      problems.textContent = describeError(err);
      problems.hidden = false;
    } finally {
      more.disabled = false;
    }
  }

  more.addEventListener("click", loadPage);
  loadPage();
  return { element, dispose: () => controller.abort() };
}

function transcriptTabs(ctx, base, transcripts, mount) {
  let current;
  const opens = new Map();
  const tabs = transcripts.map((transcript) =>
    h("button", {
      type: "button",
      role: "tab",
      class: "tab",
      title: transcript.path,
      text: transcript.label,
      on: { click: () => select(transcript, true) },
    }),
  );
  function select(transcript, scroll = false) {
    current?.dispose();
    for (const [index, tab] of tabs.entries()) {
      tab.setAttribute("aria-selected", String(transcripts[index] === transcript));
    }
    current = transcriptView(ctx, base, transcript, opens);
    mount.replaceChildren(current.element);
    if (scroll) mount.scrollIntoView({ block: "start" });
  }
  for (const transcript of transcripts) {
    if (transcript.agentId !== undefined) opens.set(transcript.agentId, () => select(transcript, true));
  }
  select(transcripts[0]);
  return { element: h("div", { class: "tabs", role: "tablist" }, tabs), dispose: () => current?.dispose() };
}

/** The page of the stored session `sessionId` (the caller's latest live one of that id). */
export function storedSessionView(ctx, sessionId) {
  const base = `/session-blobs/${seg(sessionId)}`;
  const head = h(
    "header",
    { class: "view-head" },
    h("h2", { title: sessionId, text: `Stored session ${sessionId}` }),
  );
  const body = h("div", { class: "stored-body" });
  const element = h("div", { class: "session-view stored-session-view" }, head, body);
  let tabs;
  let disposed = false;

  ctx.api.json(`${base}/transcripts`).then(
    (outline) => {
      if (disposed) return;
      head.append(recordLine(outline), activityLine(ctx, outline.requestId));
      const mount = h("div");
      if (outline.transcripts.length > 0) tabs = transcriptTabs(ctx, base, outline.transcripts, mount);
      replace(body, [
        h("div", { class: "panels" }, filesPanel(ctx, base, outline)),
        tabs
          ? [tabs.element, mount]
          : h("p", {
              class: "empty",
              text: `No transcript to read as a thread: a ${outline.agentType} session is stored as its CLI's export. Download its files above.`,
            }),
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
      tabs?.dispose();
    },
  };
}
