// One thread (a job's alias): the folded entries, then the live tail. The tail connects first and
// the snapshot is read once it is ready, so nothing posted in between is lost; items already shown
// (by id) are skipped, and a result that arrives live joins its call's card.
import { describeError, seg } from "./api.js";
import { h } from "./dom.js";
import { entryComponent } from "./entries.js";

/** Milliseconds before the live tail reconnects after its stream ended or failed. */
export const RECONNECT_MS = 3000;

function nearBottom() {
  return window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 80;
}

function sleep(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** The thread `ctx.thread` as a live section; `dispose` ends the tail. */
export function threadView(ctx) {
  const { jobId, alias } = ctx.thread;
  const path = `/threads/${seg(jobId)}/${seg(alias)}`;
  const list = h("div", { class: "entries" });
  const empty = h("p", { class: "empty", text: "Loading…" });
  const live = h("span", { class: "live", text: "connecting" });
  const problem = h("div", { class: "inline-error", hidden: true });
  const failed = h("div", { class: "thread-failed", hidden: true });
  const element = h(
    "section",
    { class: "thread", "data-thread": `${jobId}/${alias}` },
    h("div", { class: "thread-bar" }, h("h3", { text: `${jobId} / ${alias}` }), live),
    problem,
    failed,
    list,
    empty,
  );
  const controller = new AbortController();
  const seen = new Set();
  const running = new Map(); // invocation id → cards still waiting for their result, oldest first
  let loaded = false;

  const isSeen = (item) => item?.id !== undefined && seen.has(item.id);
  const markSeen = (...items) => {
    for (const item of items) if (item?.id !== undefined) seen.add(item.id);
  };

  function show(component, fresh) {
    const follow = fresh && nearBottom();
    if (fresh) component.element.classList.add("fresh");
    list.append(component.element);
    empty.hidden = true;
    if (follow) component.element.scrollIntoView({ block: "end" });
  }

  function takeRunning(invocationId) {
    const cards = running.get(invocationId);
    const card = cards?.shift();
    if (cards?.length === 0) running.delete(invocationId);
    return card;
  }

  /** Shows an entry unless it was shown already; `catchUp` skips items without ids (unknowable). */
  function apply(entry, { fresh = false, catchUp = false } = {}) {
    const items = entry.kind === "tool" ? [entry.call, entry.result].filter(Boolean) : [entry.item];
    if (items.every(isSeen) || (catchUp && items.some((item) => item.id === undefined))) return;
    if (
      entry.kind === "tool" &&
      entry.result &&
      !isSeen(entry.result) &&
      (!entry.call || isSeen(entry.call))
    ) {
      const card = takeRunning(entry.invocationId);
      if (card) {
        card.setResult(entry.result);
        markSeen(entry.result);
        return;
      }
    }
    const component = entryComponent(entry, { ...ctx, thread: { jobId, alias } });
    show(component, fresh);
    markSeen(...items);
    if (entry.kind === "tool" && !entry.result) {
      running.set(entry.invocationId, [...(running.get(entry.invocationId) ?? []), component]);
    }
  }

  function applyLive(item) {
    const tool = item.metadata?.tool;
    const type = item.metadata?.type;
    if (type === "tool_call" && tool?.invocation_id) {
      apply({ kind: "tool", invocationId: tool.invocation_id, name: tool.name, call: item }, { fresh: true });
    } else if (type === "tool_result" && tool?.invocation_id) {
      apply({ kind: "tool", invocationId: tool.invocation_id, result: item }, { fresh: true });
    } else {
      apply({ kind: "item", item }, { fresh: true });
    }
  }

  async function loadSnapshot() {
    const catchUp = loaded;
    const thread = await ctx.api.allPages(path, "entries", { signal: controller.signal });
    showStatus(thread);
    for (const entry of thread.entries) apply(entry, { catchUp });
    loaded = true;
    if (list.childElementCount === 0)
      empty.textContent = "No items in this thread yet; new ones appear here live.";
  }

  function setLive(state, title = "") {
    live.textContent = state;
    live.className = `live live-${state.replaceAll(" ", "-")}`;
    live.title = title;
  }

  /** A failed thread says so above its items: later posts to it are refused. */
  function showStatus(thread) {
    if (thread?.status !== "failed") return;
    const failure = thread.failure ?? {};
    failed.textContent = `This thread failed (${failure.reason ?? failure.code ?? "unknown reason"}${failure.itemId ? `, item ${failure.itemId}` : ""}); new posts to it are refused.`;
    failed.hidden = false;
  }

  function report(err) {
    problem.textContent = describeError(err);
    problem.hidden = false;
  }

  /**
   * One connection of the tail; resolves true when it is worth reconnecting, "resync" when the
   * server dropped this tail for falling behind (reconnect at once: the snapshot read on `ready`
   * fills in what was missed).
   */
  async function connect() {
    const queue = [];
    let snapshot = null;
    let settled = false;
    let resync = false;
    const settle = () => {
      settled = true;
      for (const item of queue.splice(0)) applyLive(item);
    };
    try {
      await ctx.api.events(`${path}/events`, {
        signal: controller.signal,
        onEvent(name, data) {
          if (name === "ready") {
            setLive("live", "new items appear as they are posted");
            problem.hidden = true;
            snapshot = loadSnapshot().catch(report).finally(settle);
          } else if (name === "resync") {
            resync = true;
            setLive("catching up", "fell behind the live tail; reloading the thread");
          } else if (name === "status") {
            showStatus(JSON.parse(data));
          } else if (name === "item") {
            const item = JSON.parse(data);
            if (settled) applyLive(item);
            else queue.push(item);
          }
        },
      });
    } catch (err) {
      if (controller.signal.aborted) return false;
      setLive("offline", describeError(err));
      // Without a tail, still show what the thread holds.
      if (!snapshot && !loaded) await loadSnapshot().catch(report);
      // A refused request (bad key, unknown thread) will be refused again; a lost connection is retried.
      if (err?.status >= 400 && err.status < 500) return false;
    }
    await snapshot;
    if (controller.signal.aborted) return false;
    return resync ? "resync" : true;
  }

  (async () => {
    let lastResync = 0;
    for (let again = await connect(); again; again = await connect()) {
      // A resync reconnects at once, unless the last one was moments ago (a thread posting faster
      // than this page can take it must not make it reload in a loop).
      if (again === "resync" && Date.now() - lastResync > RECONNECT_MS) {
        lastResync = Date.now();
        continue;
      }
      setLive("reconnecting");
      await sleep(RECONNECT_MS, controller.signal);
    }
  })();

  return { element, dispose: () => controller.abort() };
}
