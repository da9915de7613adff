// The first page's view of the life of stored data: what expires soon (and when), what is in the
// trash (and when it is purged, with a way back), and what was deleted lately (what, by whom,
// why), from `GET /expiring`, `GET /trash` and `GET /audit`.
import { describeError, seg } from "./api.js";
import { formatBytes, formatTime, h, shortId } from "./dom.js";

/** How far ahead the expiring panel looks (the API's span). */
export const EXPIRING_WITHIN = "7d";
/** How far back the deleted panel reads the audit, and how many of its newest rows it shows. */
export const DELETED_SINCE_DAYS = 30;
const DELETED_SHOWN = 20;

const cell = (className, text, title) =>
  h("td", { class: `cell ${className}`, text, ...(title ? { title } : {}) });

/** Stored things that expire within the window, soonest first. */
export function expiringPanel(things) {
  const row = (thing) =>
    h(
      "tr",
      { "data-kind": thing.kind, "data-id": thing.id },
      cell("when", formatTime(thing.expiresAt)),
      cell("kind", thing.kind === "sessionBlobs" ? "stored session" : "upload"),
      cell("id", shortId(thing.id, 28), thing.id),
      cell("size", formatBytes(thing.bytes)),
    );
  return h(
    "section",
    { class: "panel life-overview expiring-overview" },
    h("h3", { text: "Expiring within 7 days" }),
    things.length === 0
      ? h("p", { class: "empty", text: "Nothing of yours expires within 7 days." })
      : h("table", {}, h("tbody", {}, things.map(row))),
  );
}

/** The newest rows of the deletion audit, newest first. */
export function deletedPanel(rows) {
  const newest = rows.slice(-DELETED_SHOWN).reverse();
  const row = (entry) =>
    h(
      "tr",
      { "data-kind": entry.kind, "data-id": entry.id },
      cell("when", formatTime(entry.at)),
      cell("kind", entry.kind),
      cell("id", shortId(entry.id, 28), entry.id),
      cell("size", entry.bytes === undefined ? "" : formatBytes(entry.bytes)),
      cell("by", entry.by),
      cell("reason", entry.reason),
    );
  return h(
    "section",
    { class: "panel life-overview deleted-overview" },
    h("h3", { text: `Deleted in the last ${DELETED_SINCE_DAYS} days` }),
    newest.length === 0
      ? h("p", { class: "empty", text: "Nothing of yours was deleted." })
      : h("table", {}, h("tbody", {}, newest.map(row))),
  );
}

/**
 * What the owner deleted that is kept for its grace period, soonest purged first, each with a
 * Restore button (`POST /trash/:kind/:id/restore`) and a Purge button (`DELETE /trash/:kind/:id`)
 * that asks once more ("Purge for good?") before it deletes anything: a purge has no way back.
 */
export function trashPanel(api, trash) {
  const row = (thing) => {
    const status = cell("status", "");
    const path = `/trash/${seg(thing.kind)}/${seg(thing.id)}`;
    const restore = h("button", { type: "button", class: "restore", text: "Restore" });
    const purge = h("button", { type: "button", class: "purge", text: "Purge" });
    /** Runs one action of the row; done, both buttons go and the status says what happened. */
    const act = async (button, send, done) => {
      restore.disabled = true;
      purge.disabled = true;
      try {
        await send();
        status.textContent = done;
        restore.remove();
        purge.remove();
      } catch (err) {
        status.textContent = describeError(err);
        restore.disabled = false;
        purge.disabled = false;
        if (button === purge) purge.textContent = "Purge";
      }
    };
    restore.addEventListener("click", () => act(restore, () => api.post(`${path}/restore`), "restored"));
    purge.addEventListener("click", () => {
      // The first click only asks: a purge deletes for good.
      if (!purge.classList.contains("confirming")) {
        purge.classList.add("confirming");
        purge.textContent = "Purge for good?";
        return;
      }
      purge.classList.remove("confirming");
      return act(purge, () => api.delete(path), "purged");
    });
    return h(
      "tr",
      { "data-kind": thing.kind, "data-id": thing.id },
      cell("when", formatTime(thing.purgeAfter), `deleted ${thing.trashedAt} by ${thing.by}`),
      cell("kind", thing.kind),
      cell("id", shortId(thing.id, 28), thing.id),
      cell("size", formatBytes(thing.bytes)),
      cell("by", thing.by),
      h("td", { class: "cell action" }, restore, purge),
      status,
    );
  };
  return h(
    "section",
    { class: "panel life-overview trash-overview" },
    h("h3", { text: `In the trash (${formatBytes(trash.bytes)}), purged on the date shown` }),
    trash.items.length === 0
      ? h("p", { class: "empty", text: "Nothing of yours is in the trash." })
      : h("table", {}, h("tbody", {}, trash.items.map(row))),
  );
}
