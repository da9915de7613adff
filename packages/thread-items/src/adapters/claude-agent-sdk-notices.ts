import { firstLine } from "../builders/brief-text.js";
import type { StatusInput } from "../builders/build-items.js";
import { type Fields, object, statusDetail } from "./record-fields.js";

const text = (value: unknown): string | undefined =>
  typeof value === "string" && value.trim() !== "" ? value : undefined;

const status = (token: string, detail: string | undefined, brief?: string): StatusInput => ({
  status: token,
  ...(detail === undefined ? {} : { detail: statusDetail(detail) }),
  ...(brief === undefined ? {} : { brief }),
});

const seconds = (ms: unknown): string =>
  typeof ms === "number" && Number.isFinite(ms) ? `${Math.round(ms / 100) / 10} s` : "a moment";

/** `api_retry`: which attempt, after what error, and when the next one runs. */
function apiRetry(message: Fields): StatusInput {
  const attempt = typeof message.attempt === "number" ? message.attempt : undefined;
  const of = typeof message.max_retries === "number" ? ` of ${message.max_retries}` : "";
  const cause = [text(message.error), message.error_status ? `HTTP ${message.error_status}` : undefined]
    .filter(Boolean)
    .join(", ");
  const detail = `${attempt === undefined ? "retrying" : `attempt ${attempt}${of}`} in ${seconds(message.retry_delay_ms)}${cause ? ` (${cause})` : ""}`;
  return status("api_retry", detail);
}

/** `rate_limit_event`: a status only when a limit is close (`allowed_warning`) or hit (`rejected`). */
function rateLimit(message: Fields): StatusInput | undefined {
  const info = object(message.rate_limit_info);
  if (!info) return undefined;
  // Most events say the query is allowed: nothing to show, nothing to format.
  const token =
    info.status === "rejected"
      ? "rate_limited"
      : info.status === "allowed_warning"
        ? "rate_limit_warning"
        : undefined;
  if (token === undefined) return undefined;
  const kind = text(info.rateLimitType);
  const resets =
    typeof info.resetsAt === "number" ? `, resets ${new Date(info.resetsAt * 1000).toISOString()}` : "";
  return status(token, `${kind ?? "rate limit"}${resets}`);
}

/**
 * Status items for the Agent SDK's notices: `system` messages other than `init`, `compact_boundary`
 * and `status`, and the top-level types that are neither content nor a result. Undefined for a
 * message ignored on purpose; the README lists each type and what it becomes.
 */
export function sdkNotice(message: Fields): StatusInput | undefined {
  if (message.type === "rate_limit_event") return rateLimit(message);
  if (message.type === "auth_status") {
    const error = text(message.error);
    return error ? status("auth_error", error) : undefined;
  }
  if (message.type !== "system") return undefined;
  switch (message.subtype) {
    case "api_retry":
      return apiRetry(message);
    case "permission_denied": {
      const tool = text(message.tool_name) ?? "a tool";
      return status(
        "permission_denied",
        text(message.message) ?? `${tool} was denied`,
        `Permission denied: ${tool}`,
      );
    }
    case "model_refusal_fallback":
      return status(
        "model_fallback",
        text(message.content) ?? `${message.original_model} → ${message.fallback_model}`,
      );
    case "model_refusal_no_fallback":
      return status("model_refusal", text(message.content));
    case "local_command_output": {
      const output = text(message.content);
      return output ? status("command_output", output) : undefined;
    }
    case "hook_response":
      return message.outcome === "error"
        ? status(
            "hook_failed",
            [
              `${message.hook_event ?? "hook"} ${message.hook_name ?? ""}`.trim(),
              text(message.stderr) ?? text(message.output),
            ]
              .filter(Boolean)
              .join(": "),
          )
        : undefined;
    case "plugin_install":
      return message.status === "failed"
        ? status(
            "plugin_install_failed",
            [text(message.name), text(message.error)].filter(Boolean).join(": "),
          )
        : undefined;
    case "task_started": {
      const description = text(message.description);
      return status(
        "task_started",
        description,
        description ? `Task started: ${firstLine(description)}` : "Task started",
      );
    }
    case "task_notification": {
      const summary = text(message.summary);
      const head = `Task ${typeof message.status === "string" ? message.status : "ended"}`;
      return status("task_notification", summary, summary ? `${head}: ${firstLine(summary)}` : head);
    }
    case "worker_shutting_down":
      return status("worker_shutting_down", text(message.reason));
    case "notification": {
      const body = text(message.text);
      return body ? status("notification", body) : undefined;
    }
    case "files_persisted": {
      const failed = Array.isArray(message.failed) ? message.failed : [];
      if (failed.length === 0) return undefined;
      const lines = failed.map((entry) => {
        const fields = (entry ?? {}) as Fields;
        return `${fields.filename}: ${fields.error}`;
      });
      return status("files_persist_failed", lines.join("\n"));
    }
    case "mirror_error":
      return status("mirror_error", text(message.error));
    case "informational": {
      const content = text(message.content);
      return content ? status(message.level === "warning" ? "warning" : "informational", content) : undefined;
    }
    case "session_writes_lost": {
      const lost = Array.isArray(message.lost) ? message.lost.join(", ") : "session data";
      return status("session_writes_lost", `${lost} not written (${message.error_code ?? "write failed"})`);
    }
    default:
      return undefined;
  }
}
