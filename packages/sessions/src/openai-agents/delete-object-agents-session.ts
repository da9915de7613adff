import type { OperationOptions } from "@stowage/core";
import { type ObjectAgentsSessionOptions, sessionRecordsContext } from "./create-object-agents-session.js";
import { deleteSessionRecords } from "./session-records.js";

/**
 * Deletes a session made by `createObjectAgentsSession` with the same options: every record, so
 * that nothing of its history is left (unlike `clearSession`, which leaves its clear record).
 * Returns whether the session had any record; deleting one never written is fine.
 */
export function deleteObjectAgentsSession(
  options: ObjectAgentsSessionOptions,
  operation: OperationOptions = {},
): Promise<boolean> {
  return deleteSessionRecords(sessionRecordsContext(options, "deleteObjectAgentsSession"), operation);
}
