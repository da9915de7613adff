// What is stored of a session for a follow-up run (GET /session-blobs/<id>): its agent type,
// sizes and expiry, in one line under the session's title; nothing when none is stored.
import { ApiError, describeError, seg } from "./api.js";
import { formatBytes, formatTime, h, replace } from "./dom.js";
import { storedHash } from "./sidebar.js";

/** An element that fills itself once the stored record is read. */
export function storedSessionLine(api, sessionId) {
  const line = h("p", { class: "muted stored-session", hidden: true });
  api.json(`/session-blobs/${seg(sessionId)}`).then(
    (stored) => {
      replace(line, [
        "Stored for a follow-up run: ",
        h("span", { class: "badge agent-type", text: stored.agentType }),
        ` session, ${formatBytes(stored.rawSizeBytes)}, ${formatBytes(stored.storedBytes)} stored (${stored.codec})`,
        stored.expiresAt ? `, until ${formatTime(stored.expiresAt)}` : "",
        " · ",
        h("a", { class: "open-stored", href: storedHash(sessionId), text: "Read its transcript" }),
      ]);
      line.hidden = false;
    },
    (err) => {
      if (!(err instanceof ApiError && err.status === 404)) {
        replace(line, [h("span", { class: "inline-error", text: `stored session: ${describeError(err)}` })]);
        line.hidden = false;
      }
    },
  );
  return line;
}
