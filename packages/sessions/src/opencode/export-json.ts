import { describeValue, StowageError, safeIdProblem } from "@stowage/core";

/** The rows an OpenCode export writes when imported: its messages' and parts' ids, in order. */
export interface OpencodeExportIds {
  messageIds: string[];
  partIds: string[];
}

function invalid(problem: string): StowageError {
  return new StowageError("INVALID_INPUT", `OpenCode export ${problem}`, { reason: "BAD_OPENCODE_EXPORT" });
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** A message or part id: a safe id (OpenCode's are `msg_…`, `prt_…`), once in the export. */
function takeId(value: unknown, where: string, seen: Set<string>): string {
  const problem = safeIdProblem(value);
  if (problem) throw invalid(`${where}.id ${problem}, got ${describeValue(value)}`);
  const id = value as string;
  if (seen.has(id)) throw invalid(`${where}.id ${id} appears twice`);
  seen.add(id);
  return id;
}

/**
 * Checks that `bytes` are what `opencode export <sessionId>` prints (OpenCode 1.x) and returns
 * the ids of the rows `opencode import` would write: UTF-8 JSON
 * `{ info: { id: <sessionId>, … }, messages: [{ info: { id, sessionID, … }, parts: [{ id, sessionID, messageID, … }] }] }`
 * where every message and every part names this session, every part its own message, and each
 * id is a safe id given once. `opencode import` files a part under the message its `messageID`
 * names and keeps a row whose id exists, so an export that named another session's message
 * would add to that session; this refuses it. Other fields are OpenCode's own and pass through
 * unread. Throws INVALID_INPUT (reason `BAD_OPENCODE_EXPORT`).
 */
export function readOpencodeExport(bytes: Uint8Array, sessionId: string): OpencodeExportIds {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (err) {
    throw new StowageError("INVALID_INPUT", "OpenCode export is not valid UTF-8 JSON", {
      cause: err,
      reason: "BAD_OPENCODE_EXPORT",
    });
  }
  if (!isRecord(value)) throw invalid("must be a JSON object");
  const { info, messages } = value;
  if (!isRecord(info)) throw invalid("has no info object");
  if (info.id !== sessionId) throw invalid(`is of session ${describeValue(info.id)}, not ${sessionId}`);
  if (!Array.isArray(messages)) throw invalid("has no messages array");
  const messageIds = new Set<string>();
  const partIds = new Set<string>();
  for (const [index, message] of messages.entries()) {
    const where = `messages[${index}]`;
    if (!isRecord(message) || !isRecord(message.info) || !Array.isArray(message.parts)) {
      throw invalid(`${where} must be { info: { id, sessionID, … }, parts: [ … ] }`);
    }
    const messageId = takeId(message.info.id, `${where}.info`, messageIds);
    if (message.info.sessionID !== sessionId) {
      throw invalid(`${where} names session ${describeValue(message.info.sessionID)}, not ${sessionId}`);
    }
    for (const [partIndex, part] of message.parts.entries()) {
      const partWhere = `${where}.parts[${partIndex}]`;
      if (!isRecord(part)) throw invalid(`${partWhere} must be an object`);
      takeId(part.id, partWhere, partIds);
      if (part.sessionID !== sessionId) {
        throw invalid(`${partWhere} names session ${describeValue(part.sessionID)}, not ${sessionId}`);
      }
      if (part.messageID !== messageId) {
        throw invalid(
          `${partWhere} names message ${describeValue(part.messageID)}, not its own ${messageId}`,
        );
      }
    }
  }
  return { messageIds: [...messageIds], partIds: [...partIds] };
}
