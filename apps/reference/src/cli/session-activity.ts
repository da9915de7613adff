import type { Principal } from "@stowage/core";
import type { SessionActivityKind } from "@stowage/tenancy/shared";
import type { SessionActivityMeasure } from "../observability/session-activity-log.js";
import type { CommandContext } from "./context.js";
import { withStoredData } from "./open.js";

/**
 * A capture's or restore's structured line (the server's fields and names, JSON on stderr beside
 * the notes, never on stdout), and the request's last one of its kind in the principal's activity
 * in the shared store, where the server's activity route and viewer read it.
 */
export async function recordSessionActivity(
  context: CommandContext,
  principal: Principal,
  kind: SessionActivityKind,
  measure: SessionActivityMeasure,
): Promise<void> {
  const { logSessionActivity, sessionActivityEntry } = await import(
    "../observability/session-activity-log.js"
  );
  const { jsonLogger } = await import("../http/request-log.js");
  const { SESSION_ACTIVITY_PREFIX, sessionActivityOf } = await import("@stowage/tenancy/shared");
  const entry = sessionActivityEntry(measure);
  logSessionActivity(
    jsonLogger((line) => context.note(line)),
    kind,
    entry,
  );
  try {
    await withStoredData(context, (stored) =>
      sessionActivityOf(stored.shared, SESSION_ACTIVITY_PREFIX, principal).record(kind, entry),
    );
  } catch (err) {
    // The capture is stored (or the restore written) already: say the record failed, not the command.
    context.note(
      `warning: could not record this ${kind} as the request's last (${err instanceof Error ? err.message : String(err)})`,
    );
  }
}
